/// What help, the man page and the completion scripts say about an option or argument.
public struct ArgumentHelp: ExpressibleByStringInterpolation, Sendable {
    public var text: String
    /// The word standing for the value: `--config <file>`. Default: the option's name.
    public var valueName: String?

    public init(_ text: String, valueName: String? = nil) {
        self.text = text
        self.valueName = valueName
    }

    public init(stringLiteral text: String) { self.init(text) }
}

/// How an option is spelt: `--` and the property's name in kebab case, or a long name of its
/// own; with a one-letter spelling beside it when it has one: `[.customShort("c"), .long]`.
public struct NameSpecification: ExpressibleByArrayLiteral, Sendable {
    public struct Element: Sendable {
        enum Kind: Sendable {
            case long
            case customLong(String)
            case customShort(Character)
        }

        let kind: Kind

        /// `--` and the property's name in kebab case.
        public static var long: Element { Element(kind: .long) }
        public static func customLong(_ name: String) -> Element { Element(kind: .customLong(name)) }
        /// `-c`: one letter, with a single dash.
        public static func customShort(_ letter: Character) -> Element { Element(kind: .customShort(letter)) }
    }

    let elements: [Element]

    public init(arrayLiteral elements: Element...) { self.elements = elements }

    public static var long: NameSpecification { [.long] }
    public static func customLong(_ name: String) -> NameSpecification { [.customLong(name)] }
}

/// `--name` and `--no-name` for a flag that may also be left unset.
public enum FlagInversion: Sendable {
    case prefixedNo
}

/// Where an array argument's words come from.
public enum ArgumentArrayParsingStrategy: Sendable {
    /// Every word after `--`.
    case postTerminator
}

/// What a shell offers for a value, besides an enum's values.
public enum CompletionKind: Sendable {
    /// File names ending in `.extension`, and directories.
    case file(extension: String)
    /// Words the program prints when the scripts run `PROGRAM ---completion NAME`: read when
    /// Tab is pressed, e.g. the popup names of the configuration.
    case custom(String, @Sendable () -> [String])
}

/// One option, flag or positional argument, as the parser, help, the man page and the
/// completion scripts see it.
struct ArgumentDefinition {
    enum Kind: Equatable {
        /// `--name value`, `--name=value`.
        case option
        /// `--name`, with `--no-name` when invertible.
        case flag(invertible: Bool)
        /// A word in its place.
        case positional
        /// Every word after `--`.
        case postTerminator
    }

    var kind: Kind
    /// Without dashes: `log-level`. For positionals the value name.
    var name: String
    /// `c` for `-c`, when the option has a one-letter spelling too.
    var short: Character? = nil
    var valueName: String
    var help: String
    /// An enum's values, offered and checked.
    var allowedValues: [String]
    /// "(default: …)" in help; nil when there is none worth showing.
    var defaultDescription: String?
    var completion: CompletionKind?
    var isRepeated: Bool
    /// Whether the command line may leave it out.
    var isOptional: Bool

    var spelling: String { "--" + name }
    /// `-c`, when there is one.
    var shortSpelling: String? { short.map { "-\($0)" } }

    /// What help lists it as: `-c, --config <file>`.
    var listing: String { (shortSpelling.map { $0 + ", " } ?? "") + synopsis }

    /// What this type of value is, for "The value 'a' is invalid for '<x>': an integer is expected".
    var expected: String = ""

    /// `--config <file>`, `<x>`, `--escape/--no-escape`: how errors and help name it.
    var synopsis: String {
        switch kind {
        case .option: "\(spelling) <\(valueName)>"
        case .flag(let invertible): invertible ? "\(spelling)/--no-\(name)" : spelling
        case .positional: "<\(valueName)>"
        case .postTerminator: "-- <\(valueName)>"
        }
    }

    var takesValue: Bool { kind == .option }

    /// An option or flag, spelt `--name` on the command line; not a positional argument.
    var isNamed: Bool {
        switch kind {
        case .option, .flag: true
        case .positional, .postTerminator: false
        }
    }
}

/// A property wrapper the parser fills in: it describes itself and takes the words given.
protocol ArgumentStorage: AnyObject {
    /// `propertyName` is the property's name, without the wrapper's underscore.
    func definition(propertyName: String) -> ArgumentDefinition
    /// One value word; false when the word is not a value of the property's type.
    func take(_ word: String) -> Bool
    /// A flag given as `--name` (true) or `--no-name` (false).
    func set(_ flag: Bool)
    /// Whether the command line gave it.
    var isGiven: Bool { get }
}

/// An `@OptionGroup`: its own wrappers are the command's too.
protocol ArgumentGroup: AnyObject {
    var arguments: ParsableArguments { get }
}

/// `--log-level` from `logLevel`.
func kebabCase(_ name: String) -> String {
    var result = ""
    for character in name {
        if character.isUppercase {
            result += "-" + character.lowercased()
        } else {
            result.append(character)
        }
    }
    return result
}

extension NameSpecification {
    /// The name without dashes.
    func long(for propertyName: String) -> String {
        for element in elements {
            switch element.kind {
            case .long: return kebabCase(propertyName)
            case .customLong(let name): return name
            case .customShort: continue
            }
        }
        return kebabCase(propertyName)
    }

    /// The one-letter spelling, if any.
    var short: Character? {
        for element in elements { if case .customShort(let letter) = element.kind { return letter } }
        return nil
    }
}

/// The value of an option or positional argument: what it is before the command line says
/// anything, and how each word given changes it.
struct ValueSlot<Value> {
    private(set) var given: Value?
    /// nil: the command line must give it.
    let initial: Value?
    let allowedValues: [String]
    let defaultDescription: String?
    let isRepeated: Bool
    /// What a word must be, when the type says: "an integer".
    let expected: String
    /// The value after one more word; nil when the word is not a value of the type.
    private let accept: (Value?, String) -> Value?

    var value: Value? { given ?? initial }

    /// One word: a required value, or one with a default (`initial`).
    static func single(_ initial: Value?) -> ValueSlot where Value: ExpressibleByArgument {
        ValueSlot(initial: initial, allowedValues: Value.allValueStrings, defaultDescription: initial?.defaultValueDescription,
                  isRepeated: false, expected: Value.expectedValue) { _, word in Value(argument: word) }
    }

    /// One word, or nothing: nil.
    static func optional<Element: ExpressibleByArgument>() -> ValueSlot where Value == Element? {
        ValueSlot(initial: .some(nil), allowedValues: Element.allValueStrings, defaultDescription: nil,
                  isRepeated: false, expected: Element.expectedValue) { _, word in Element(argument: word).map { Optional.some($0) } }
    }

    /// One of `values` (a table's, not an enum's), or nothing: nil.
    static func choice(_ values: [String]) -> ValueSlot where Value == String? {
        ValueSlot(initial: .some(nil), allowedValues: values, defaultDescription: nil, isRepeated: false, expected: "") { _, word -> String?? in
            // Explicit: a bare nil would be a given value of nil, not a word refused.
            guard values.contains(word) else { return .none }
            return .some(word)
        }
    }

    /// Any number of words, each appended.
    static func repeated<Element: ExpressibleByArgument>(_ initial: [Element]) -> ValueSlot where Value == [Element] {
        ValueSlot(initial: initial, allowedValues: Element.allValueStrings, defaultDescription: nil,
                  isRepeated: true, expected: Element.expectedValue) { sofar, word in Element(argument: word).map { (sofar ?? []) + [$0] } }
    }

    private init(initial: Value?, allowedValues: [String], defaultDescription: String?, isRepeated: Bool, expected: String,
                 accept: @escaping (Value?, String) -> Value?) {
        self.initial = initial
        self.allowedValues = allowedValues
        self.defaultDescription = defaultDescription
        self.isRepeated = isRepeated
        self.expected = expected
        self.accept = accept
    }

    mutating func take(_ word: String) -> Bool {
        guard let value = accept(given, word) else { return false }
        given = value
        return true
    }
}

/// An option: `--name value` or `--name=value`. Optional, with a default, required, or
/// repeated (an array).
@propertyWrapper
public final class Option<Value>: ArgumentStorage {
    private var slot: ValueSlot<Value>
    private let name: NameSpecification
    private let help: ArgumentHelp?
    private let completion: CompletionKind?

    public var wrappedValue: Value {
        guard let value = slot.value else { preconditionFailure("a required option was left out and the parser let it go") }
        return value
    }

    private init(_ slot: ValueSlot<Value>, name: NameSpecification, help: ArgumentHelp?, completion: CompletionKind?) {
        self.slot = slot
        self.name = name
        self.help = help
        self.completion = completion
    }

    func definition(propertyName: String) -> ArgumentDefinition {
        let long = name.long(for: propertyName)
        return ArgumentDefinition(kind: .option, name: long, short: name.short, valueName: help?.valueName ?? long,
                                  help: help?.text ?? "", allowedValues: slot.allowedValues,
                                  defaultDescription: slot.defaultDescription, completion: completion,
                                  isRepeated: slot.isRepeated, isOptional: slot.initial != nil, expected: slot.expected)
    }

    func take(_ word: String) -> Bool { slot.take(word) }

    func set(_ flag: Bool) {}

    var isGiven: Bool { slot.given != nil }
}

extension Option where Value: ExpressibleByArgument {
    /// An option with a default: help shows it.
    public convenience init(wrappedValue: Value, name: NameSpecification = .long, help: ArgumentHelp? = nil,
                            completion: CompletionKind? = nil) {
        self.init(.single(wrappedValue), name: name, help: help, completion: completion)
    }

    /// An option the command line must give.
    public convenience init(name: NameSpecification = .long, help: ArgumentHelp? = nil, completion: CompletionKind? = nil) {
        self.init(.single(nil), name: name, help: help, completion: completion)
    }
}

extension Option {
    /// An option that may be left out: nil then.
    public convenience init<Element: ExpressibleByArgument>(name: NameSpecification = .long, help: ArgumentHelp? = nil,
                                                            completion: CompletionKind? = nil) where Value == Element? {
        self.init(.optional(), name: name, help: help, completion: completion)
    }

    /// An option given any number of times, each value appended.
    public convenience init<Element: ExpressibleByArgument>(wrappedValue: [Element], name: NameSpecification = .long,
                                                            help: ArgumentHelp? = nil, completion: CompletionKind? = nil)
    where Value == [Element] {
        self.init(.repeated(wrappedValue), name: name, help: help, completion: completion)
    }
}

extension Option where Value == String? {
    /// An option that may be left out, taking one of `values`: choices a table gives rather than an enum.
    public convenience init(name: NameSpecification, help: ArgumentHelp? = nil, values: [String]) {
        self.init(.choice(values), name: name, help: help, completion: nil)
    }
}

/// Options made from a table rather than declared one by one (`clickawayctl open`'s popup
/// keys): each is an `Option` or `Flag` named with `.customLong`, listed in the table's order.
public final class ArgumentList {
    let members: [ArgumentStorage]

    public init(_ members: [any ListedArgument]) {
        // Option and Flag, the only conformers, are ArgumentStorage.
        self.members = members.map { $0 as! ArgumentStorage }
    }
}

/// What an `ArgumentList` holds: an `Option` or a `Flag`.
public protocol ListedArgument: AnyObject {}
extension Option: ListedArgument {}
extension Flag: ListedArgument {}

/// A flag: `--name` alone, true when given; or `--name`/`--no-name`, nil when neither is.
@propertyWrapper
public final class Flag<Value>: ArgumentStorage {
    private var given: Bool?
    private let name: NameSpecification
    private let help: ArgumentHelp?
    private let invertible: Bool
    private let value: (Bool?) -> Value

    public var wrappedValue: Value { value(given) }

    private init(name: NameSpecification, help: ArgumentHelp?, invertible: Bool, value: @escaping (Bool?) -> Value) {
        self.name = name
        self.help = help
        self.invertible = invertible
        self.value = value
    }

    func definition(propertyName: String) -> ArgumentDefinition {
        let long = name.long(for: propertyName)
        return ArgumentDefinition(kind: .flag(invertible: invertible), name: long, short: name.short, valueName: long,
                                  help: help?.text ?? "", allowedValues: [], defaultDescription: nil, completion: nil,
                                  isRepeated: false, isOptional: true)
    }

    func take(_ word: String) -> Bool { false }

    func set(_ flag: Bool) { given = flag }

    var isGiven: Bool { given != nil }
}

extension Flag where Value == Bool {
    public convenience init(wrappedValue: Bool, name: NameSpecification = .long, help: ArgumentHelp? = nil) {
        self.init(name: name, help: help, invertible: false) { $0 ?? wrappedValue }
    }
}

extension Flag where Value == Bool? {
    public convenience init(name: NameSpecification = .long, inversion: FlagInversion, help: ArgumentHelp? = nil) {
        self.init(name: name, help: help, invertible: true) { $0 }
    }
}

/// A positional argument: required, optional, or every word after `--`.
@propertyWrapper
public final class Argument<Value>: ArgumentStorage {
    private var slot: ValueSlot<Value>
    private let help: ArgumentHelp?
    private let completion: CompletionKind?
    private let kind: ArgumentDefinition.Kind

    public var wrappedValue: Value {
        guard let value = slot.value else { preconditionFailure("a required argument was left out and the parser let it go") }
        return value
    }

    private init(_ slot: ValueSlot<Value>, help: ArgumentHelp?, completion: CompletionKind?, kind: ArgumentDefinition.Kind) {
        self.slot = slot
        self.help = help
        self.completion = completion
        self.kind = kind
    }

    func definition(propertyName: String) -> ArgumentDefinition {
        let valueName = help?.valueName ?? kebabCase(propertyName)
        return ArgumentDefinition(kind: kind, name: valueName, valueName: valueName, help: help?.text ?? "",
                                  allowedValues: slot.allowedValues, defaultDescription: nil, completion: completion,
                                  isRepeated: slot.isRepeated, isOptional: slot.initial != nil, expected: slot.expected)
    }

    func take(_ word: String) -> Bool { slot.take(word) }

    func set(_ flag: Bool) {}

    var isGiven: Bool { slot.given != nil }
}

extension Argument where Value: ExpressibleByArgument {
    public convenience init(help: ArgumentHelp? = nil, completion: CompletionKind? = nil) {
        self.init(.single(nil), help: help, completion: completion, kind: .positional)
    }
}

extension Argument {
    public convenience init<Element: ExpressibleByArgument>(help: ArgumentHelp? = nil, completion: CompletionKind? = nil)
    where Value == Element? {
        self.init(.optional(), help: help, completion: completion, kind: .positional)
    }

    /// Every remaining positional word (`show [POPUP...]`); none is fine.
    public convenience init<Element: ExpressibleByArgument>(wrappedValue: [Element], help: ArgumentHelp? = nil,
                                                            completion: CompletionKind? = nil) where Value == [Element] {
        self.init(.repeated(wrappedValue), help: help, completion: completion, kind: .positional)
    }

    public convenience init<Element: ExpressibleByArgument>(wrappedValue: [Element], parsing: ArgumentArrayParsingStrategy,
                                                            help: ArgumentHelp? = nil) where Value == [Element] {
        self.init(.repeated(wrappedValue), help: help, completion: nil, kind: .postTerminator)
    }
}

/// The options of another `ParsableArguments`, shared by several commands.
@propertyWrapper
public final class OptionGroup<Value: ParsableArguments>: ArgumentGroup {
    public var wrappedValue: Value

    public init() { wrappedValue = Value() }

    var arguments: ParsableArguments { wrappedValue }
}
