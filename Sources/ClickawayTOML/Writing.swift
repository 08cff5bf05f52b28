/// `s` as a TOML basic string. Text from other programs' windows: every control, format
/// (bidi overrides) and line-separator character is escaped, so it can neither end the
/// string nor the comment line it sits in, nor reorder what the terminal shows.
public func tomlString(_ s: String) -> String {
    // Written as UTF-8 bytes and made a string once: appending to a String scalar by scalar
    // cost the last good configuration's save milliseconds at every reload.
    var out: [UInt8] = [UInt8(ascii: "\"")]
    out.reserveCapacity(s.utf8.count + 2)
    func append(_ text: String) { out.append(contentsOf: text.utf8) }
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": append("\\\"")
        case "\\": append("\\\\")
        case "\n": append("\\n")
        case "\r": append("\\r")
        case "\t": append("\\t")
        case "\u{8}": append("\\b")
        case "\u{c}": append("\\f")
        case " "..."~":
            // Printable ASCII, nearly all of a configuration: no look at Unicode's tables.
            out.append(UInt8(scalar.value))
        default:
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                let digits = String(scalar.value, radix: 16, uppercase: true)
                append(scalar.value <= 0xffff
                    ? "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                    : "\\U" + String(repeating: "0", count: 8 - digits.count) + digits)
            default:
                UTF8.encode(scalar) { out.append($0) }
            }
        }
    }
    out.append(UInt8(ascii: "\""))
    return String(decoding: out, as: UTF8.self)
}
