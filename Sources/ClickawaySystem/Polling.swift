internal import Glibc
public import SystemPackage

/// What a descriptor is ready for, after poll(2) or epoll_wait(2) (the same bits).
public struct Readiness: OptionSet, Hashable, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    public static let readable = Readiness(rawValue: Int16(POLLIN))
    public static let writable = Readiness(rawValue: Int16(POLLOUT))
    public static let hangUp = Readiness(rawValue: Int16(POLLHUP))
    public static let error = Readiness(rawValue: Int16(POLLERR))

    /// Something to read, or the end of it: a read will not block.
    public var canRead: Bool { !intersection([.readable, .hangUp, .error]).isEmpty }
}

extension FileDescriptor {
    /// Waits until the descriptor is ready for `events` or `deadline` passes (nil: forever),
    /// through any number of interrupting signals. Returns what it is ready for; empty when
    /// the deadline passed first.
    public func wait(for events: Readiness = .readable, until deadline: Deadline?) throws(Errno) -> Readiness {
        var entry = pollfd(fd: rawValue, events: events.rawValue, revents: 0)
        while true {
            let ready = poll(&entry, 1, Deadline.pollTimeout(deadline))
            if ready > 0 { return Readiness(rawValue: entry.revents) }
            if ready == 0 { return [] }
            let error = Errno(rawValue: errno)
            if error != .interrupted { throw error }
        }
    }

    /// Sets O_NONBLOCK: reads and writes return `.wouldBlock` instead of waiting.
    public func setNonBlocking() throws(Errno) {
        let flags = try systemCall { fcntl(rawValue, F_GETFL) }
        try systemCall { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Reads what is there now, at most `chunk` bytes, onto the end of `buffer` (through
    /// interrupting signals): the number of bytes read, 0 at the end of the stream, nil when
    /// a non-blocking read would block. The read goes to scratch memory and only what came is
    /// appended: growing `buffer` by `chunk` first would fill up to 64 KB for every read.
    public func readAvailable(appendingTo buffer: inout [UInt8], chunk: Int = 65536) throws(Errno) -> Int? {
        let result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunk) { scratch in
            let read = Result { () throws(Errno) in try systemCall { Glibc.read(rawValue, scratch.baseAddress!, chunk) } }
            if case .success(let n) = read { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<n])) }
            return read
        }
        switch result {
        case .success(let n): return n
        case .failure(.wouldBlock): return nil
        case .failure(let error): throw error
        }
    }

    /// Writes as much of `bytes` as the descriptor takes now (a socket with MSG_NOSIGNAL, so
    /// a peer gone is `.brokenPipe`, not SIGPIPE). Returns how many were written; 0 when a
    /// non-blocking write would block.
    public func writeAvailable(_ bytes: UnsafeRawBufferPointer, socket: Bool = true) throws(Errno) -> Int {
        guard !bytes.isEmpty else { return 0 }
        do {
            return try systemCall {
                socket ? Glibc.send(rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
                    : Glibc.write(rawValue, bytes.baseAddress, bytes.count)
            }
        } catch {
            if error == .wouldBlock { return 0 }
            throw error
        }
    }

    /// `writeAvailable(_:socket:)` for bytes in an array.
    public func writeAvailable(_ bytes: ArraySlice<UInt8>, socket: Bool = true) throws(Errno) -> Int {
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try writeAvailable(raw, socket: socket) } }.get()
    }

    public func writeAvailable(_ bytes: [UInt8], socket: Bool = true) throws(Errno) -> Int {
        try writeAvailable(bytes[...], socket: socket)
    }

    /// Sends all of `bytes` on a socket, waiting while it is full; a peer gone is an error
    /// (`.brokenPipe`), never SIGPIPE.
    public func sendAll(_ bytes: some Collection<UInt8>) throws(Errno) {
        let bytes = Array(bytes)
        var sent = 0
        while sent < bytes.count {
            let n = try writeAvailable(bytes[sent...])
            if n == 0 { _ = try wait(for: .writable, until: nil) }
            sent += n
        }
    }
}
