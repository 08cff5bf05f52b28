/// Splits a byte stream into lines, refusing lines longer than a limit.
struct LineBuffer {
    let limit: Int
    private var bytes: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    enum Line {
        case text(String)
        case tooLong
    }

    mutating func append(_ chunk: some Collection<UInt8>) { bytes.append(contentsOf: chunk) }

    /// Whether part of a line is waiting for the rest.
    var isEmpty: Bool { bytes.isEmpty }

    /// The next complete line, or `.tooLong` once the buffer holds more than `limit` without a newline.
    mutating func next() -> Line? {
        if let nl = bytes.firstIndex(of: 0x0A) {
            guard nl <= limit else { return .tooLong }
            let line = String(decoding: bytes[..<nl], as: UTF8.self)
            bytes.removeSubrange(...nl)
            return .text(line)
        }
        return bytes.count > limit ? .tooLong : nil
    }
}
