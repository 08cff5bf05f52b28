/// Splits a byte stream into lines, refusing lines longer than a limit.
///
/// Linear in what it is given: a line that arrives in many pieces is scanned once, and lines
/// taken off the front are not moved one by one.
struct LineBuffer {
    let limit: Int
    private var bytes: [UInt8] = []
    /// Bytes at the front already taken as lines.
    private var start = 0
    /// Bytes after `start` known to hold no newline.
    private var scanned = 0

    init(limit: Int) { self.limit = limit }

    enum Line {
        case text(String)
        case tooLong
    }

    /// What the buffer holds, without taking it.
    enum State {
        case empty
        /// Part of a line, waiting for the rest.
        case partial
        /// At least one complete line.
        case line
        /// More than `limit` bytes without a newline, or a complete line longer than that.
        case tooLong
    }

    mutating func append(_ chunk: some Collection<UInt8>) {
        if start > 0 {
            bytes.removeFirst(start)
            start = 0
        }
        bytes.append(contentsOf: chunk)
    }

    /// Whether part of a line is waiting for the rest.
    var isEmpty: Bool { start == bytes.count }

    /// Bytes held and not taken yet.
    var count: Int { bytes.count - start }

    private mutating func newline() -> Int? {
        if let nl = bytes[(start + scanned)...].firstIndex(of: 0x0A) { return nl }
        scanned = bytes.count - start
        return nil
    }

    mutating func state() -> State {
        if let nl = newline() { return nl - start <= limit ? .line : .tooLong }
        if count > limit { return .tooLong }
        return isEmpty ? .empty : .partial
    }

    /// The next complete line, or `.tooLong` once the buffer holds more than `limit` without a newline.
    mutating func next() -> Line? {
        guard let nl = newline() else { return count > limit ? .tooLong : nil }
        guard nl - start <= limit else { return .tooLong }
        let line = String(decoding: bytes[start..<nl], as: UTF8.self)
        start = nl + 1
        scanned = 0
        if start == bytes.count {
            // A large request leaves no large buffer behind.
            bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024)
            start = 0
        }
        return .text(line)
    }
}
