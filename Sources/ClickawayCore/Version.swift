/// The version `clickaway --version` and `clickawayctl --version` print. The Makefile reads
/// it from this line for the Debian package and the tarball: change it here only.
public let clickawayVersion = "0.1.0"
