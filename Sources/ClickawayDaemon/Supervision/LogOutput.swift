internal import ClickawaySystem
internal import Glibc
public import Logging
public import SystemPackage

/// Where the daemon's log goes, and in what form.
///
/// On a terminal (or a file, or anything but the journal) each record is one line as swift-log's
/// StreamLogHandler writes it: `2026-11-25T15:32:55+0000 info clickaway: key=value [Module] message`,
/// a multi-line message on several lines.
///
/// When stderr is the journal, as systemd.exec(5) says it is when $JOURNAL_STREAM names
/// stderr's device and inode, each record is one journal entry with the priority of its level
/// and no timestamp (the journal has its own):
/// - sent to the journal's native socket (/run/systemd/journal/socket) as one datagram with
///   PRIORITY, SYSLOG_IDENTIFIER=clickaway and MESSAGE, a multi-line MESSAGE in the protocol's
///   length-prefixed form, so a diagnostic with its carets stays one entry, lines intact, and
///   each metadata key as a field of its own (`popup` as CLICKAWAY_POPUP, see `journalFieldName`),
///   so that `journalctl CLICKAWAY_POPUP=calendar` finds a popup's entries;
/// - when that socket cannot take it (not there, full, too long), written to stderr as one line
///   with sd-daemon(3)'s `<N>` prefix, each newline in the message shown as ` ⏎ ` so that the
///   stream does not cut it into several entries.
///
/// Levels are named as `--log-level` names them: swift-log's notice is shown as info (6) and
/// critical as error (3).
public final class LogOutput: @unchecked Sendable {
    public enum Form: Equatable, Sendable {
        case terminal
        case journal
    }

    /// The socket systemd-journald reads native messages on.
    public static let journalSocketPath = "/run/systemd/journal/socket"
    /// For tests only: another path for the journal's native socket ("" for none at all).
    public static let journalSocketVariable = "CLICKAWAY_JOURNAL_SOCKET"

    public let form: Form
    private let stream: FileDescriptor
    private let journal: (socket: FileDescriptor, address: UnixSocketAddress)?
    private let writer: StreamWriter
    // Written from the loop's thread only (the loader thread does not log).
    /// Records the stream did not take at once, since the last one it took.
    private var dropped = 0
    /// The stream took part of a record: what comes next starts on a line of its own.
    private var cut = false

    /// How records reach the stream without ever waiting for it.
    private enum StreamWriter {
        /// A terminal or a pipe, reopened as a file description of this process's own with
        /// O_NONBLOCK: the one it shares with the shell that started it stays as it was.
        case nonBlocking(FileDescriptor)
        /// A socket (the journal's stream): send(2) with MSG_DONTWAIT.
        case socket
        /// A file, or what could not be reopened: written as it is.
        case plain
    }

    /// The daemon's stderr, in the journal's form when $JOURNAL_STREAM says stderr is the journal.
    public static func standardError(environment: [String: String]) -> LogOutput {
        let form: Form = streamIsTheJournal(.standardError, journalStream: environment["JOURNAL_STREAM"]) ? .journal : .terminal
        return LogOutput(form: form, stream: .standardError,
                         journalSocket: environment[journalSocketVariable] ?? journalSocketPath)
    }

    /// `journalSocket` is used in the journal's form only; nil or "" for none (every record on `stream`).
    public init(form: Form, stream: FileDescriptor, journalSocket: String?) {
        self.form = form
        self.stream = stream
        if form == .journal, let journalSocket, !journalSocket.isEmpty,
           let address = try? UnixSocketAddress(path: journalSocket),
           let socket = try? FileDescriptor.unixSocket(.datagram) {
            journal = (socket, address)
        } else {
            journal = nil
        }
        writer = Self.writer(for: stream)
    }

    deinit {
        try? journal?.socket.close()
        if case .nonBlocking(let descriptor) = writer { try? descriptor.close() }
    }

    private static func writer(for stream: FileDescriptor) -> StreamWriter {
        var status = stat()
        guard fstat(stream.rawValue, &status) == 0 else { return .plain }
        switch status.st_mode & S_IFMT {
        case S_IFSOCK:
            return .socket
        case S_IFCHR, S_IFIFO:
            let own = open("/proc/self/fd/\(stream.rawValue)", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            return own >= 0 ? .nonBlocking(FileDescriptor(rawValue: own)) : .plain
        default:
            return .plain
        }
    }

    /// Writes one record in this output's form.
    public func write(level: Logger.Level, label: String, metadata: Logger.Metadata?, source: String, message: String) {
        switch form {
        case .terminal:
            writeStream(Self.terminalLine(timestamp: Self.timestamp(), level: level, label: label, metadata: metadata,
                                          source: source, message: message))
        case .journal:
            let text = Self.journalMessage(metadata: metadata, message: message)
            if sentToJournal(level: level, text: text, metadata: metadata) { return }
            writeStream(Self.journalLine(level: level, message: text))
        }
    }

    /// A failure that ends the daemon, as the last thing it says: an error, waited for, since
    /// no record after it would say that it was dropped.
    public func fail(_ message: String) {
        let line: String
        switch form {
        case .terminal:
            line = message + "\n"
        case .journal:
            if sentToJournal(level: .error, text: message, metadata: nil) { return }
            line = Self.journalLine(level: .error, message: message)
        }
        let notice = dropped > 0 ? droppedNotice() : ""
        (dropped, cut) = (0, false)
        _ = try? stream.writeAll((notice + line).utf8)
    }

    /// Sends the record to the journal's native socket; false when it is not there or cannot
    /// take it now (the stream is the journal too).
    private func sentToJournal(level: Logger.Level, text: String, metadata: Logger.Metadata?) -> Bool {
        guard let journal else { return false }
        do {
            try journal.socket.sendDatagram(Self.journalDatagram(level: level, message: text, metadata: metadata), to: journal.address)
            return true
        } catch {
            return false
        }
    }

    /// Writes `text` to the stream without waiting: a terminal held with ^S, a pipe nobody
    /// reads or a full journal stream must not hold the loop, nor the pointer while a press
    /// waits. A record the stream cannot take now is dropped and counted; the next one it
    /// takes comes after a line that says how many were.
    private func writeStream(_ text: String) {
        if dropped > 0 {
            // Not taken whole: this record is one more dropped.
            guard writeOrDrop(droppedNotice()) else { return }
            (dropped, cut) = (0, false)
        }
        writeOrDrop(text)
    }

    /// Writes `text` if the stream takes it now; else counts a record dropped (and whether the
    /// stream took part of it). Whether it was written whole.
    @discardableResult
    private func writeOrDrop(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let written = writeNow(bytes)
        guard written < bytes.count else { return true }
        dropped += 1
        if written > 0 { cut = true }
        return false
    }

    /// The line that says how many records were dropped, on a line of its own.
    private func droppedNotice() -> String {
        let sentence = "\(dropped) log record\(dropped == 1 ? " was" : "s were") dropped: the log's reader did not take them in time"
        let line = switch form {
        case .terminal:
            Self.terminalLine(timestamp: Self.timestamp(), level: .warning, label: "clickaway", metadata: nil,
                              source: "ClickawayDaemon", message: sentence)
        case .journal:
            Self.journalLine(level: .warning, message: sentence)
        }
        return (cut ? "\n" : "") + line
    }

    /// Writes what the stream takes now; the number of bytes written.
    private func writeNow(_ bytes: [UInt8]) -> Int {
        var written = 0
        while written < bytes.count {
            let n: Int? = bytes[written...].withUnsafeBytes { piece in
                switch writer {
                case .plain:
                    return try? stream.write(piece)
                case .nonBlocking(let descriptor):
                    return try? descriptor.write(piece)
                case .socket:
                    return try? systemCall { send(stream.rawValue, piece.baseAddress, piece.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                }
            }
            guard let n, n > 0 else { break }
            written += n
        }
        return written
    }

    // MARK: The forms, without I/O

    /// The level's name as `--log-level` offers it: error, warning, info, debug or trace.
    public static func name(_ level: Logger.Level) -> String {
        switch level {
        case .critical, .error: "error"
        case .warning: "warning"
        case .notice, .info: "info"
        case .debug: "debug"
        case .trace: "trace"
        }
    }

    /// syslog(3)'s priority, as sd-daemon(3) and the journal's PRIORITY field take it.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .critical, .error: 3
        case .warning: 4
        case .notice, .info: 6
        case .debug, .trace: 7
        }
    }

    /// StreamLogHandler's line, with the level named as `--log-level` names it.
    public static func terminalLine(timestamp: String, level: Logger.Level, label: String, metadata: Logger.Metadata?,
                                    source: String, message: String) -> String {
        let pretty = metadata.flatMap(prettify).map { " \($0)" } ?? ""
        return "\(timestamp) \(name(level))\(label.isEmpty ? "" : " ")\(label):\(pretty) [\(source)] \(message)\n"
    }

    /// The text of a journal entry: the message, then the metadata as key=value.
    public static func journalMessage(metadata: Logger.Metadata?, message: String) -> String {
        guard let pretty = metadata.flatMap(prettify) else { return message }
        return message.isEmpty ? pretty : "\(message) \(pretty)"
    }

    /// What shows a newline in a journal entry written to the stream.
    public static let newlineOnTheStream = " ⏎ "

    /// One line for the journal's stream: `<N>`, then the message with its newlines shown as ` ⏎ `.
    public static func journalLine(level: Logger.Level, message: String) -> String {
        var line = "<\(priority(level))>"
        var first = true
        for part in message.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            if !first { line += newlineOnTheStream }
            line += part
            first = false
        }
        return line + "\n"
    }

    /// What a metadata key is called as a journal field. journald takes only names of
    /// `A-Z`, `0-9` and `_`, not starting with `_` (trusted fields) or a digit, at most 64
    /// characters, and drops an entry's invalid fields (`journal_field_valid()`). The prefix
    /// keeps clear of the fields journald and journalctl give a meaning (MESSAGE, PRIORITY,
    /// ERRNO, CODE_FILE, ...): `popup` is CLICKAWAY_POPUP, `grace-ms` CLICKAWAY_GRACE_MS.
    public static func journalFieldName(_ key: String) -> String {
        let prefix = "CLICKAWAY_"
        var name = prefix
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): name.append(Character(Unicode.Scalar(byte - 32)))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): name.append(Character(Unicode.Scalar(byte)))
            default: name.append("_")
            }
        }
        return String(name.prefix(64))
    }

    /// One datagram of the journal's native protocol: KEY=value lines, a value with a newline
    /// as KEY, a newline, its length as a little-endian 64-bit number, the value and a newline.
    /// Each metadata entry is a field of its own too, named by `journalFieldName`, in key order.
    public static func journalDatagram(level: Logger.Level, message: String, metadata: Logger.Metadata? = nil,
                                       identifier: String = "clickaway") -> [UInt8] {
        var bytes: [UInt8] = []
        func field(_ key: String, _ value: String) {
            let utf8 = Array(value.utf8)
            bytes += Array(key.utf8)
            if utf8.contains(UInt8(ascii: "\n")) {
                bytes.append(UInt8(ascii: "\n"))
                withUnsafeBytes(of: UInt64(utf8.count).littleEndian) { bytes += $0 }
            } else {
                bytes.append(UInt8(ascii: "="))
            }
            bytes += utf8
            bytes.append(UInt8(ascii: "\n"))
        }
        field("PRIORITY", "\(priority(level))")
        field("SYSLOG_IDENTIFIER", identifier)
        field("MESSAGE", message)
        for (key, value) in (metadata ?? [:]).sorted(by: { $0.key < $1.key }) { field(journalFieldName(key), "\(value)") }
        return bytes
    }

    /// `DEV:INO` as $JOURNAL_STREAM gives them, decimal.
    public static func parseJournalStream(_ value: String) -> (device: UInt64, inode: UInt64)? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        return (device, inode)
    }

    /// Whether `descriptor` is the file $JOURNAL_STREAM names: a unit's stderr connected to the
    /// journal, and not a terminal or file that a shell started from such a unit put in its place.
    public static func streamIsTheJournal(_ descriptor: FileDescriptor, journalStream: String?) -> Bool {
        guard let journalStream, let named = parseJournalStream(journalStream) else { return false }
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else { return false }
        return UInt64(status.st_dev) == named.device && UInt64(status.st_ino) == named.inode
    }

    private static func prettify(_ metadata: Logger.Metadata) -> String? {
        metadata.isEmpty ? nil : metadata.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
    }

    private static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The daemon's LogHandler: records to a `LogOutput`.
public struct DaemonLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: LogOutput

    public init(label: String, output: LogOutput) {
        self.label = label
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        if let error = event.error { merged["error"] = "\(error)" }
        output.write(level: event.level, label: label, metadata: merged.isEmpty ? nil : merged, source: event.source,
                     message: "\(event.message)")
    }
}
