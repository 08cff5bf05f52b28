/// `s` as a TOML basic string. Text from other programs' windows: every control, format
/// (bidi overrides) and line-separator character is escaped, so it can neither end the
/// string nor the comment line it sits in, nor reorder what the terminal shows.
public func tomlString(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{8}": out += "\\b"
        case "\u{c}": out += "\\f"
        default:
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                let digits = String(scalar.value, radix: 16, uppercase: true)
                out += scalar.value <= 0xffff
                    ? "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                    : "\\U" + String(repeating: "0", count: 8 - digits.count) + digits
            default:
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}
