internal import Glibc

/// A set of options and arguments: a command's own, or a group several commands share
/// (`@OptionGroup`). Its properties are `@Option`, `@Flag`, `@Argument` and `@OptionGroup`.
public protocol ParsableArguments {
    init()
    /// Checks the values together once all are read; a `ValidationError` is a usage error.
    mutating func validate() throws
}

extension ParsableArguments {
    public func validate() throws {}
}

/// A program or one of its subcommands.
public protocol ParsableCommand: ParsableArguments {
    static var configuration: CommandConfiguration { get }
    mutating func run() throws
}

extension ParsableCommand {
    /// A command that only groups subcommands: run alone, it prints its help.
    public func run() throws {}

    /// Parses the process's arguments, runs the command they name and exits with its status.
    public static func main() {
        let status = CommandLineProgram(root: self).run(Array(CommandLine.arguments.dropFirst()))
        exit(status)
    }
}

/// What a command says about itself in help, the man page and the completions.
/// (@unchecked: strings and metatypes only, none of them ever changed.)
public struct CommandConfiguration: @unchecked Sendable {
    /// Default: the type's name in kebab case.
    public var commandName: String?
    /// One line: help's OVERVIEW, the man page's NAME, the subcommand lists.
    public var abstract: String
    /// Paragraphs, one per line.
    public var discussion: String
    /// `--version` prints it (the program only).
    public var version: String
    public var subcommands: [any ParsableCommand.Type]
    /// What each exit status means (the program only): help's EXIT STATUS, the man page's.
    public var exitStatuses: [ExitStatusHelp]
    /// The man page's sections beyond what help has (the program only): ENVIRONMENT, FILES,
    /// EXAMPLES and the like, in the order given; EXAMPLES goes after EXIT STATUS.
    public var manual: [ManualSection]

    public init(commandName: String? = nil, abstract: String = "", discussion: String = "", version: String = "",
                subcommands: [any ParsableCommand.Type] = [], exitStatuses: [ExitStatusHelp] = [], manual: [ManualSection] = []) {
        self.commandName = commandName
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.subcommands = subcommands
        self.exitStatuses = exitStatuses
        self.manual = manual
    }
}

/// One exit status and what it means, a sentence.
public struct ExitStatusHelp: Sendable, Equatable {
    public var status: Int32
    public var meaning: String

    public init(_ status: Int32, _ meaning: String) {
        self.status = status
        self.meaning = meaning
    }
}

/// A section of the man page, written as help is: plain text in which `backticks` mark
/// literal text, and paths, `name(N)` references and the like are found by themselves.
public struct ManualSection: Sendable {
    public var title: String
    public var blocks: [ManualBlock]

    public init(_ title: String, _ blocks: [ManualBlock]) {
        self.title = title
        self.blocks = blocks
    }
}

/// A part of a man page section.
public enum ManualBlock: Sendable {
    /// Paragraphs, one per line.
    case text(String)
    /// A list of terms, each with its paragraphs (one per line).
    case list(ManualTerm, [ManualItem])
    /// Lines shown as they are, indented: commands, JSON.
    case literal(String)
}

/// How a list's terms are set: paths, environment variables, signals, commands or text.
public enum ManualTerm: Sendable {
    case path, variable, signal, command, plain
}

public struct ManualItem: Sendable {
    public var term: String
    public var text: String

    public init(_ term: String, _ text: String) {
        self.term = term
        self.text = text
    }
}

/// A usage error found after parsing: printed with the command's usage, exit status 64.
public struct ValidationError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Ends the program with this status; what it has to say is printed already.
public struct ExitCode: Error {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }
}

/// sysexits.h's EX_USAGE: the command line was wrong.
let usageErrorStatus: Int32 = 64

/// A command of the tree: its type, its words from the program's name, its subcommands.
struct CommandNode {
    let type: any ParsableCommand.Type
    let path: [String]
    let subcommands: [CommandNode]

    init(_ type: any ParsableCommand.Type, parentPath: [String] = []) {
        self.type = type
        let name = type.configuration.commandName ?? kebabCase(String(describing: type)).trimmingLeadingDash
        path = parentPath + [name]
        subcommands = type.configuration.subcommands.map { CommandNode($0, parentPath: parentPath + [name]) }
    }

    var name: String { path[path.count - 1] }
    var configuration: CommandConfiguration { type.configuration }
    var isRoot: Bool { path.count == 1 }
    /// `clickawayctl open`.
    var fullName: String { path.joined(separator: " ") }

    func subcommand(named name: String) -> CommandNode? { subcommands.first { $0.name == name } }

    /// The options and arguments of a new instance, in declaration order.
    var definitions: [ArgumentDefinition] { Bindings(type.init()).entries.map(\.definition) }

    /// Every command of the tree, this one first.
    var all: [CommandNode] { [self] + subcommands.flatMap(\.all) }
}

extension String {
    /// `-check` → `check`: a type name's kebab case starts with a dash.
    fileprivate var trimmingLeadingDash: String { hasPrefix("-") ? String(dropFirst()) : self }
}

/// The property wrappers of one instance, found by reflection: declaration order, option
/// groups and argument lists flattened, each with what it says about itself.
struct Bindings {
    struct Entry {
        let definition: ArgumentDefinition
        let storage: ArgumentStorage
    }

    private(set) var entries: [Entry] = []
    /// The option groups, validated with their command.
    private(set) var groups: [ParsableArguments] = []

    init(_ arguments: ParsableArguments) {
        for child in Mirror(reflecting: arguments).children {
            let name = child.label.map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 } ?? ""
            if let storage = child.value as? ArgumentStorage {
                entries.append(Entry(definition: storage.definition(propertyName: name), storage: storage))
            } else if let list = child.value as? ArgumentList {
                entries += list.members.map { Entry(definition: $0.definition(propertyName: name), storage: $0) }
            } else if let group = child.value as? ArgumentGroup {
                let inner = Bindings(group.arguments)
                entries += inner.entries
                groups += [group.arguments] + inner.groups
            }
        }
    }
}
