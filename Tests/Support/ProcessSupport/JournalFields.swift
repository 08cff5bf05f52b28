/// The fields of one datagram of systemd's native journal protocol: `KEY=value\n`, or for a
/// value with newlines `KEY\n`, its length as 64-bit little-endian, the value and `\n`.
public func journalFields(_ bytes: [UInt8]) throws -> [String: String] {
    var fields: [String: String] = [:]
    var i = 0
    while i < bytes.count {
        guard let end = bytes[i...].firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") }) else {
            throw HarnessError("a journal field without = or a newline at byte \(i)")
        }
        let key = String(decoding: bytes[i..<end], as: UTF8.self)
        if bytes[end] == UInt8(ascii: "=") {
            guard let stop = bytes[end...].firstIndex(of: UInt8(ascii: "\n")) else {
                throw HarnessError("journal field \(key) does not end with a newline")
            }
            fields[key] = String(decoding: bytes[(end + 1)..<stop], as: UTF8.self)
            i = stop + 1
        } else {
            guard end + 9 <= bytes.count else { throw HarnessError("journal field \(key) has no length") }
            let length = Int(bytes[(end + 1)..<(end + 9)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            let start = end + 9
            guard start + length < bytes.count, bytes[start + length] == UInt8(ascii: "\n") else {
                throw HarnessError("journal field \(key): \(length) bytes and a newline do not follow")
            }
            fields[key] = String(decoding: bytes[start..<(start + length)], as: UTF8.self)
            i = start + length + 1
        }
    }
    return fields
}
