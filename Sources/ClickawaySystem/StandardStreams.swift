internal import SystemPackage

/// Writes straight to the standard descriptors, unbuffered: a message is out before the
/// process exits, and a reader on a pipe sees each line as it is written.
public enum StandardStreams {
    /// `text` and a newline on stderr.
    public static func error(_ text: String) { write(text + "\n", to: .standardError) }

    /// `text` and a newline on stdout, now.
    public static func output(_ text: String) { write(text + "\n", to: .standardOutput) }

    private static func write(_ text: String, to descriptor: FileDescriptor) {
        _ = try? descriptor.writeAll(text.utf8)
    }
}
