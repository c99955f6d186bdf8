//! Nothing: this package only pins the `appimage` crate whose runtime scripts/appimage uses.
