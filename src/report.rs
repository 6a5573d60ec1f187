//! Per-shader outcomes, the summary, JSON report and CI annotations. (Being written.)
