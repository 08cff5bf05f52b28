internal import Glibc

/// The process environment as a dictionary.
public func processEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let text = String(cString: pointer)
        if let equals = text.firstIndex(of: "=") {
            environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        entry += 1
    }
    return environment
}

extension Dictionary where Key == String, Value == String {
    /// The variable's value, nil when it is unset or empty.
    public func nonEmpty(_ name: String) -> String? {
        self[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
