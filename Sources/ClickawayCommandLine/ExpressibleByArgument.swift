/// A value an option or argument takes from one word of the command line.
public protocol ExpressibleByArgument {
    /// nil: the word is not a value of this type (the parser says so, naming the option).
    init?(argument: String)
    /// The words help, man pages and completions offer; empty when any word may do.
    static var allValueStrings: [String] { get }
    /// How help and the man page show a default value.
    var defaultValueDescription: String { get }
    /// What a word must be, said when one is not: "an integer". Empty: the error says nothing more
    /// (enums list their values instead).
    static var expectedValue: String { get }
}

extension ExpressibleByArgument {
    public static var allValueStrings: [String] { [] }
    public static var expectedValue: String { "" }
    public var defaultValueDescription: String { "\(self)" }
}

/// String enums: their raw values, in declaration order.
extension ExpressibleByArgument where Self: CaseIterable & RawRepresentable, RawValue == String {
    public init?(argument: String) { self.init(rawValue: argument) }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public var defaultValueDescription: String { rawValue }
}

extension String: ExpressibleByArgument {
    public init?(argument: String) { self = argument }
}

extension Int: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument, radix: 10) }
    public static var expectedValue: String { "an integer" }
}

extension Int32: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument, radix: 10) }
    public static var expectedValue: String { "an integer" }
}

extension Int64: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument, radix: 10) }
    public static var expectedValue: String { "an integer" }
}

extension UInt8: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument, radix: 10) }
    public static var expectedValue: String { "an integer from 0 to 255" }
}

extension Double: ExpressibleByArgument {
    public static var expectedValue: String { "a number" }

    /// Finite numbers only: "nan" and "inf" are no durations or coordinates.
    public init?(argument: String) {
        guard let value = Double(argument), value.isFinite else { return nil }
        self = value
    }
}
