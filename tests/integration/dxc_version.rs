//! The DXC in use reports its version through `IDxcVersionInfo`, and it is at least the
//! documented minimum. (The refusal of an older one, with the real DXC 1.6.2112 of
//! `compushady==0.17.5`, runs under Wine in `scripts/windows-wine-check.sh`, a `.ci/run` step:
//! no Linux build of a DXC that old has the COM layout hassle-rs calls.)

use shrec::dxc::{self, version};

#[test]
fn the_library_in_use_reports_a_supported_version_and_its_commit() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).expect("DXC");
    let v = version::query(&lib.path).expect("IDxcVersionInfo");
    assert!(v.is_supported(), "{} is DXC {v}, below the minimum {:?}", lib.path.display(), version::MINIMUM);
    let (count, hash) = v.commit.clone().expect("IDxcVersionInfo2");
    assert!(count > 0 && !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{v}");
    // asked twice (the library stays loaded): the same answer
    assert_eq!(version::query(&lib.path).unwrap(), v);
}

#[test]
fn a_file_that_is_not_dxc_has_no_version() {
    let e = version::query(std::path::Path::new("/nonexistent/libdxcompiler.so")).unwrap_err();
    assert!(e.contains("/nonexistent/libdxcompiler.so"), "{e}");
}
