//! pica family (container parsing for detection; translation comes with its issue).
