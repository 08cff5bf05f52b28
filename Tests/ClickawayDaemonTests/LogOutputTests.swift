import ClickawayDaemon
import ClickawaySystem
import Foundation
import Logging
import ProcessSupport
import SystemPackage
import Testing

/// The log's two forms: StreamLogHandler's lines for a terminal, and for the journal one entry
/// per record with its priority, on the native socket or, failing that, on the stream.
@Suite struct LogOutputTests {
    static let diagnostic = "config.toml:3:12: error: unknown key \"clas\"\n  window = { clas = \"Pop\" }\n             ^~~~\n"
        + "the configuration has errors; running with no popups"

    /// Everything written to a pipe so far (the output keeps a descriptor of its own on it, so
    /// no end of file comes: what is there is read without waiting).
    static func drain(_ pipe: (readEnd: FileDescriptor, writeEnd: FileDescriptor)) throws -> String {
        try pipe.writeEnd.close()
        let text = try available(pipe.readEnd)
        try pipe.readEnd.close()
        return text
    }

    /// What `readEnd` holds now.
    static func available(_ readEnd: FileDescriptor) throws -> String {
        try readEnd.setNonBlocking()
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { try readEnd.read(into: $0) }
            } catch Errno.wouldBlock {
                break
            }
            if n == 0 { break }
            text += buffer[..<n]
        }
        return String(decoding: text, as: UTF8.self)
    }

    enum Stream: CaseIterable, CustomStringConvertible {
        case pipe, socket
        var description: String { self == .pipe ? "a pipe (terminal form)" : "a socket (the journal's stream)" }
    }

    /// A stream nobody reads (a pipe to a stopped pager, a terminal held with ^S, a full
    /// journal stream) never holds the writer: what it cannot take is dropped, and the next
    /// record it takes follows a line that says how many were.
    @Test(arguments: Stream.allCases)
    func aStreamNobodyReadsNeverHoldsTheLogAndItSaysWhatWasDropped(_ kind: Stream) throws {
        let (readEnd, writeEnd): (FileDescriptor, FileDescriptor)
        // Small buffers, so that 3,000 records overflow them whatever the system's defaults.
        switch kind {
        case .pipe:
            (readEnd, writeEnd) = try FileDescriptor.pipe()
            _ = fcntl(writeEnd.rawValue, 1031, 4096)  // F_SETPIPE_SZ, which Glibc hides behind _GNU_SOURCE
        case .socket:
            var ends: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
            (readEnd, writeEnd) = (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
            var size: Int32 = 4096
            _ = setsockopt(writeEnd.rawValue, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        defer {
            try? readEnd.close()
            try? writeEnd.close()
        }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-journal-\(UUID().uuidString)").path
        let output = LogOutput(form: kind == .pipe ? .terminal : .journal, stream: writeEnd, journalSocket: missing)
        let records = 3000
        // On a thread of its own, so that a writer that waited would show as a timeout here.
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for i in 0..<records {
                output.write(level: .info, label: "clickaway", metadata: nil, source: "ClickawayDaemonTests", message: "record \(i) end")
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 20) == .timedOut {
            Issue.record("the log waited for a stream nobody read")
            while done.wait(timeout: .now() + 0.1) == .timedOut { _ = try Self.available(readEnd) }
        }
        let first = try Self.available(readEnd)
        let received = first.split(separator: "\n").filter { $0.hasSuffix(" end") }.count
        #expect(received > 0 && received < records, "\(received) of \(records) records read")

        output.write(level: .info, label: "clickaway", metadata: nil, source: "ClickawayDaemonTests", message: "after")
        let lines = try Self.available(readEnd).split(separator: "\n", omittingEmptySubsequences: false)
        let notice = lines.first { $0.contains("dropped") }.map(String.init) ?? ""
        let count = notice.components(separatedBy: " log record").first?.split(whereSeparator: { $0 == " " || $0 == ">" }).last
            .flatMap { Int($0) }
        // A record cut off at its last byte reads as whole once the notice's newline ends it.
        #expect(count == records - received || count == records - received + 1, "\(notice); \(received) read")
        #expect(notice.contains(kind == .pipe ? "warning clickaway" : "<4>"), "\(notice)")
        #expect(lines.last(where: { !$0.isEmpty })?.hasSuffix("after") == true, "\(lines)")
    }

    @Test func levelsAreNamedAndPrioritisedAsLogLevelNamesThem() {
        let all: [Logger.Level] = [.trace, .debug, .info, .notice, .warning, .error, .critical]
        #expect(all.map(LogOutput.name) == ["trace", "debug", "info", "info", "warning", "error", "error"])
        #expect(all.map(LogOutput.priority) == [7, 7, 6, 6, 4, 3, 3])
    }

    @Test func theTerminalKeepsStreamLogHandlersLine() {
        let line = LogOutput.terminalLine(timestamp: "2026-11-25T15:32:55+0000", level: .notice, label: "clickaway",
                                          metadata: ["window": "0x1", "popup": "pop"], source: "ClickawayDaemon",
                                          message: "popup opened")
        #expect(line == "2026-11-25T15:32:55+0000 info clickaway: popup=pop window=0x1 [ClickawayDaemon] popup opened\n")
        let critical = LogOutput.terminalLine(timestamp: "t", level: .critical, label: "clickaway", metadata: nil,
                                              source: "ClickawayDaemon", message: "lost the display")
        #expect(critical == "t error clickaway: [ClickawayDaemon] lost the display\n")
    }

    @Test func theJournalsStreamGetsOnePrefixedLinePerRecord() {
        let line = LogOutput.journalLine(level: .error, message: Self.diagnostic)
        #expect(line.hasPrefix("<3>config.toml:3:12: error: unknown key"))
        #expect(line.filter { $0 == "\n" }.count == 1 && line.hasSuffix("\n"), "\(line)")
        #expect(line.contains("\"clas\" ⏎   window = { clas = \"Pop\" } ⏎              ^~~~ ⏎ the configuration"), "\(line)")
        #expect(LogOutput.journalLine(level: .warning, message: "w") == "<4>w\n")
        #expect(LogOutput.journalLine(level: .notice, message: "n") == "<6>n\n")
        #expect(LogOutput.journalLine(level: .trace, message: "t") == "<7>t\n")
        #expect(LogOutput.journalMessage(metadata: ["b": "2", "a": "1"], message: "running") == "running a=1 b=2")
    }

    @Test func theNativeDatagramCarriesAMultiLineMessageWhole() throws {
        let fields = try journalFields(LogOutput.journalDatagram(level: .error, message: Self.diagnostic))
        #expect(fields == ["PRIORITY": "3", "SYSLOG_IDENTIFIER": "clickaway", "MESSAGE": Self.diagnostic])
        let oneLine = LogOutput.journalDatagram(level: .info, message: "running")
        #expect(String(decoding: oneLine, as: UTF8.self) == "PRIORITY=6\nSYSLOG_IDENTIFIER=clickaway\nMESSAGE=running\n")
    }

    /// Metadata keys become fields journald keeps: `A-Z0-9_`, not starting with `_` or a digit,
    /// at most 64 characters, and none of the names journald gives a meaning.
    @Test func metadataKeysAreValidJournalFieldNames() {
        #expect(LogOutput.journalFieldName("popup") == "CLICKAWAY_POPUP")
        #expect(LogOutput.journalFieldName("grace-ms") == "CLICKAWAY_GRACE_MS")
        #expect(LogOutput.journalFieldName("_pid") == "CLICKAWAY__PID")
        #expect(LogOutput.journalFieldName("2x") == "CLICKAWAY_2X")
        #expect(LogOutput.journalFieldName("é") == "CLICKAWAY___")
        #expect(LogOutput.journalFieldName("message") != "MESSAGE")
        #expect(LogOutput.journalFieldName(String(repeating: "k", count: 100)).count == 64)
        for key in ["popup", "Window ID", "x.y", "", "ü-1", String(repeating: "a", count: 70)] {
            let name = LogOutput.journalFieldName(key)
            #expect(name.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") },
                    "\(name)")
            #expect(!name.hasPrefix("_") && !(name.first?.isNumber ?? true) && name.count <= 64, "\(name)")
        }
    }

    @Test func theNativeDatagramCarriesTheMetadataAsFields() throws {
        let bytes = LogOutput.journalDatagram(level: .info, message: "dismissed popups=a,b",
                                              metadata: ["popups": "a,b", "x": "12", "note": "two\nlines"])
        #expect(try journalFields(bytes) == [
            "PRIORITY": "6", "SYSLOG_IDENTIFIER": "clickaway", "MESSAGE": "dismissed popups=a,b",
            "CLICKAWAY_POPUPS": "a,b", "CLICKAWAY_X": "12", "CLICKAWAY_NOTE": "two\nlines",
        ])
    }

    @Test func journalStreamMustNameThisVeryFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-journal-\(UUID().uuidString)").path
        let file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: .ownerReadWrite)
        defer { try? file.close(); unlink(path) }
        var status = stat()
        #expect(fstat(file.rawValue, &status) == 0)
        #expect(LogOutput.streamIsTheJournal(file, journalStream: "\(status.st_dev):\(status.st_ino)"))
        #expect(!LogOutput.streamIsTheJournal(file, journalStream: "\(status.st_dev):\(status.st_ino + 1)"))
        #expect(!LogOutput.streamIsTheJournal(file, journalStream: nil))
        #expect(!LogOutput.streamIsTheJournal(file, journalStream: "\(status.st_dev)"))
        #expect(!LogOutput.streamIsTheJournal(file, journalStream: "a:b"))
        #expect(LogOutput.parseJournalStream("8:1234")! == (8, 1234))
    }

    @Test func recordsGoToTheNativeSocketWhenItIsThere() throws {
        let socket = try NotifySocket(abstract: false)
        let pipe = try FileDescriptor.pipe()
        let output = LogOutput(form: .journal, stream: pipe.writeEnd, journalSocket: socket.environmentValue)
        var logger = Logger(label: "clickaway") { DaemonLogHandler(label: $0, output: output) }
        logger.logLevel = .debug
        logger.error("\(Self.diagnostic)")
        logger.notice("a note", metadata: ["file": "x.toml"])

        let error = try #require(try socket.next(within: .seconds(5)), "no datagram arrived")
        #expect(error.senderPID == getpid())
        #expect(try journalFields(error.bytes) == ["PRIORITY": "3", "SYSLOG_IDENTIFIER": "clickaway", "MESSAGE": Self.diagnostic])
        let note = try #require(try socket.next(within: .seconds(5)), "no second datagram arrived")
        #expect(try journalFields(note.bytes)["MESSAGE"] == "a note file=x.toml")
        #expect(try journalFields(note.bytes)["PRIORITY"] == "6")
        #expect(try journalFields(note.bytes)["CLICKAWAY_FILE"] == "x.toml", "the metadata as a field of its own")
        #expect(try Self.drain(pipe) == "", "nothing on the stream while the socket takes the records")
    }

    @Test func withoutTheSocketTheStreamGetsOneLinePerRecord() throws {
        let pipe = try FileDescriptor.pipe()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-journal-\(UUID().uuidString)").path
        let output = LogOutput(form: .journal, stream: pipe.writeEnd, journalSocket: missing)
        var logger = Logger(label: "clickaway") { DaemonLogHandler(label: $0, output: output) }
        logger.logLevel = .trace
        logger.critical("lost the display")
        logger.error("\(Self.diagnostic)")
        logger.warning("w")
        logger.info("running", metadata: ["popups": "1"])
        logger.debug("d")
        logger.trace("t")
        let lines = try Self.drain(pipe).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 7, "\(lines)")
        #expect(lines[0] == "<3>lost the display")
        #expect(lines[1].hasPrefix("<3>config.toml:3:12: error:") && lines[1].hasSuffix("running with no popups"))
        #expect(Array(lines[2...]) == ["<4>w", "<6>running popups=1", "<7>d", "<7>t", ""])
    }

    @Test func theTerminalFormWritesTimestampedLines() throws {
        let pipe = try FileDescriptor.pipe()
        let output = LogOutput(form: .terminal, stream: pipe.writeEnd, journalSocket: nil)
        let logger = Logger(label: "clickaway") { DaemonLogHandler(label: $0, output: output) }
        logger.notice("a\nb")
        let text = try Self.drain(pipe)
        #expect(text.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info clickaway: \[ClickawayDaemonTests\] a\nb\n$"#,
                           options: .regularExpression) != nil, "\(text)")
    }
}
