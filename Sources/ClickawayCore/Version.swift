/// The version `clickaway --version` and `clickawayctl --version` print. The Makefile reads
/// it from this line for the Debian package and the tarball: change it here only.
public let clickawayVersion = "0.1.0"

/// The licence `--version` names, with LICENSE, the README and the Debian copyright file.
public let clickawayLicense = "MIT"

/// What `PROGRAM --version` prints: its name and version, then its licence.
public func clickawayVersionText(program: String) -> String {
    "\(program) \(clickawayVersion)\nLicense: \(clickawayLicense)"
}
