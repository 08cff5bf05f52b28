internal import Glibc

/// The date a man page carries: `.Dd November 24, 2026`.
struct ManualDate {
    let year: Int
    let month: Int
    let day: Int

    /// YYYY-MM-DD, as the Makefile takes it from the last commit.
    init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    static func today() -> ManualDate {
        var now = time(nil)
        var fields = tm()
        gmtime_r(&now, &fields)
        return ManualDate(year: Int(fields.tm_year) + 1900, month: Int(fields.tm_mon) + 1, day: Int(fields.tm_mday))
    }

    private init(year: Int, month: Int, day: Int) {
        (self.year, self.month, self.day) = (year, month, day)
    }

    private static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                                 "October", "November", "December"]

    var text: String { "\(Self.months[month - 1]) \(day), \(year)" }
}

/// The program's section 1 page in mdoc, from the definitions `--help` prints: options,
/// subcommands with theirs, and the discussion paragraphs.
enum ManualPage {
    static func page(for root: CommandNode, date: ManualDate) -> String {
        let configuration = root.configuration
        var lines = [
            ".\\\" \(root.name)(1), written by `\(root.name) --generate-manual`: change the program's help, not this page.",
            ".Dd \(date.text)",
            ".Dt \(root.name.uppercased()) 1",
            ".Os",
            ".Sh NAME",
            ".Nm \(root.name)",
            ".Nd " + sentence(configuration.abstract).split(separator: " ").map { escapedArgument(String($0)) }.joined(separator: " "),
            ".Sh SYNOPSIS",
            ".Nm",
        ]
        if root.subcommands.isEmpty {
            lines += root.definitions.map(synopsis)
        } else {
            lines.append(".Ar subcommand")
        }
        lines.append(".Sh DESCRIPTION")
        lines += paragraphs(configuration.discussion.isEmpty ? configuration.abstract : configuration.discussion)

        lines += [".Sh OPTIONS", ".Bl -tag -width 6n"]
        lines += root.definitions.filter(\.isNamed).flatMap(item)
        if !configuration.version.isEmpty { lines += [".It Fl V , Fl -version", text(HelpText.versionHelp)] }
        lines += [".It Fl h , -help", text(HelpText.helpHelp), ".El"]

        if !root.subcommands.isEmpty {
            lines += [".Sh COMMANDS", ".Bl -tag -width 6n"]
            for command in root.subcommands { lines += subcommand(command) }
            lines.append(".El")
        }
        if !configuration.exitStatuses.isEmpty {
            lines += [".Sh EXIT STATUS", ".Bl -tag -width 4n"]
            for entry in configuration.exitStatuses { lines += [".It \(entry.status)", text(entry.meaning)] }
            lines.append(".El")
        }
        let others = ["clickaway 1", "clickawayctl 1", "clickaway.toml 5"].filter { $0 != "\(root.name) 1" }
        lines.append(".Sh SEE ALSO")
        lines += others.enumerated().map { ".Xr \($0.element)" + ($0.offset < others.count - 1 ? " ," : "") }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func subcommand(_ command: CommandNode) -> [String] {
        let configuration = command.configuration
        var lines = [".It Em \(command.name)", text(configuration.abstract)]
        if !configuration.discussion.isEmpty {
            lines.append(".Pp")
            lines += paragraphs(configuration.discussion)
        }
        let definitions = command.definitions
        lines += [".Pp", ".Nm", ".Cm \(command.name)"] + definitions.map(synopsis)
        if !definitions.isEmpty {
            lines.append(".Bl -tag -width 6n")
            lines += definitions.flatMap(item)
            lines.append(".El")
        }
        return lines
    }

    /// `.Op Fl -config Ar file`.
    private static func synopsis(_ definition: ArgumentDefinition) -> String {
        var words = macroWords(definition)
        if definition.isRepeated { words += " No ..." }
        return definition.isOptional ? ".Op \(words)" : ".\(words)"
    }

    /// `Fl -config Ar file`, `Ar x`, `Fl -escape | Fl -no-escape`.
    private static func macroWords(_ definition: ArgumentDefinition) -> String {
        switch definition.kind {
        case .option: "Fl -\(definition.name) Ar \(escapedArgument(definition.valueName))"
        case .flag(let invertible): invertible ? "Fl -\(definition.name) | Fl -no-\(definition.name)" : "Fl -\(definition.name)"
        case .positional: "Ar \(escapedArgument(definition.valueName))"
        case .postTerminator: "Fl - Ar \(escapedArgument(definition.valueName))"
        }
    }

    /// `.It Fl c , Fl -config Ar file` when the option has a one-letter spelling too.
    private static func item(_ definition: ArgumentDefinition) -> [String] {
        let short = definition.short.map { "Fl \($0) , " } ?? ""
        return [".It \(short)\(macroWords(definition))", text(HelpText.describe(definition))]
    }

    private static func paragraphs(_ text: String) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n") {
            if !lines.isEmpty { lines.append(".Pp") }
            lines.append(Self.text(String(paragraph)))
        }
        return lines
    }

    /// A text line: backslashes escaped, and a leading dot or quote kept from reading as a request.
    private static func text(_ line: String) -> String {
        var escaped = ""
        for character in line {
            if character == "\\" { escaped += "\\e" } else { escaped.append(character) }
        }
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }

    /// A macro argument that mdoc would take for a macro (`Ar`, `No`, `Op`...) or a
    /// delimiter is escaped with `\&`.
    private static func escapedArgument(_ word: String) -> String {
        let characters = Array(word)
        let macroLike = (2...3).contains(characters.count) && characters[0].isUppercase && characters.dropFirst().allSatisfy(\.isLowercase)
        let delimiter = characters.count == 1 && ".,;:()[]?!|".contains(characters[0])
        return macroLike || delimiter ? "\\&" + text(word) : text(word)
    }

    /// NAME's description: the abstract without its final period.
    private static func sentence(_ abstract: String) -> String {
        abstract.hasSuffix(".") ? String(abstract.dropLast()) : abstract
    }
}
