/// A PNG writer small enough to live in the tests: 8-bit RGB, each row filtered (Sub or Up,
/// whichever leaves more zeros), deflated with the fixed Huffman codes and runs of one byte
/// as copies at distance 1. Screenshots of flat user interfaces shrink to a few per cent.
enum PNG {
    static func encode(_ shot: Screenshot, crop: (x: Int, y: Int, width: Int, height: Int)) -> [UInt8] {
        let (w, h) = (crop.width, crop.height)
        var raw: [UInt8] = []
        raw.reserveCapacity((3 * w + 1) * h)
        var previous = [UInt8](repeating: 0, count: 3 * w)
        for y in 0..<h {
            var row = [UInt8](repeating: 0, count: 3 * w)
            for x in 0..<w {
                let p = shot[crop.x + x, crop.y + y]
                row[3 * x] = UInt8(p >> 16 & 0xFF)
                row[3 * x + 1] = UInt8(p >> 8 & 0xFF)
                row[3 * x + 2] = UInt8(p & 0xFF)
            }
            let sub = row.indices.map { i in row[i] &- (i >= 3 ? row[i - 3] : 0) }
            let up = row.indices.map { i in row[i] &- previous[i] }
            let useUp = up.filter { $0 == 0 }.count > sub.filter { $0 == 0 }.count
            raw.append(useUp ? 2 : 1)
            raw += useUp ? up : sub
            previous = row
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(w)) + bigEndian(UInt32(h))
        header += [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", header) + chunk("IDAT", zlib(raw)) + chunk("IEND", [])
    }

    private static func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    private static func zlib(_ data: [UInt8]) -> [UInt8] {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return [0x78, 0x01] + deflate(data) + bigEndian(b << 16 | a)
    }

    /// One final block with the fixed codes (RFC 1951, 3.2.6).
    private static func deflate(_ data: [UInt8]) -> [UInt8] {
        var out = BitWriter()
        out.write(1, bits: 1)  // BFINAL
        out.write(1, bits: 2)  // BTYPE 01: fixed Huffman codes
        var i = 0
        while i < data.count {
            var run = 0
            if i > 0 {
                while run < 258 && i + run < data.count && data[i + run] == data[i - 1] { run += 1 }
            }
            if run >= 3 {
                out.length(run)
                out.huffman(0, bits: 5)  // distance code 0: distance 1
                i += run
            } else {
                out.literal(Int(data[i]))
                i += 1
            }
        }
        out.literal(256)
        return out.finish()
    }

    private struct BitWriter {
        var bytes: [UInt8] = []
        var current: UInt32 = 0
        var count: UInt32 = 0

        /// `bits` bits of `value`, least significant first (header fields, extra bits).
        mutating func write(_ value: Int, bits: Int) {
            for k in 0..<bits { push(UInt32(value >> k) & 1) }
        }

        /// A Huffman code, most significant bit first.
        mutating func huffman(_ code: Int, bits: Int) {
            for k in stride(from: bits - 1, through: 0, by: -1) { push(UInt32(code >> k) & 1) }
        }

        mutating func literal(_ v: Int) {
            switch v {
            case 0...143: huffman(0x30 + v, bits: 8)
            case 144...255: huffman(0x190 + v - 144, bits: 9)
            case 256...279: huffman(v - 256, bits: 7)
            default: huffman(0xC0 + v - 280, bits: 8)
            }
        }

        static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
        static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]

        mutating func length(_ n: Int) {
            let code = Self.lengthBase.lastIndex { $0 <= n }!
            literal(257 + code)
            write(n - Self.lengthBase[code], bits: Self.lengthExtra[code])
        }

        private mutating func push(_ bit: UInt32) {
            current |= bit << count
            count += 1
            if count == 8 {
                bytes.append(UInt8(current))
                current = 0
                count = 0
            }
        }

        mutating func finish() -> [UInt8] {
            if count > 0 { bytes.append(UInt8(current)) }
            return bytes
        }
    }
}
