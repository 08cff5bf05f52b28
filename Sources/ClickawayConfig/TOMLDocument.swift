import TOMLKit

/// One file parsed by TOMLKit (toml++), with the source positions TOMLKit does not keep.
struct TOMLDocument {
    let root: TOMLTable
    let index: SourceIndex
    let lines: SourceLines

    enum Outcome {
        case parsed(TOMLDocument)
        /// A syntax error: the file's only diagnostic, since parsing stops there.
        case invalid(Diagnostic)
    }

    static func parse(_ file: ConfigFile) -> Outcome {
        // toml++ reads a C string: text after a NUL would silently vanish.
        if file.text.unicodeScalars.contains("\0") {
            return .invalid(Diagnostic(file: file.path, message: "contains a NUL character; is it a text file?"))
        }
        let lines = SourceLines(file.text)
        let index = SourceIndex(text: file.text)
        if let trap = index.firstParserTrap {
            let statementsBefore = String(String.UnicodeScalarView(file.text.unicodeScalars.prefix(trap.statementOffset)))
            if case .invalid(let earlier) = table(statementsBefore, file: file.path, lines: lines) {
                return .invalid(earlier)
            }
            return .invalid(Diagnostic(file: file.path, line: trap.position.line, column: trap.position.column,
                                       sourceLine: lines[trap.position.line], message: "invalid TOML: \(trap.message)"))
        }
        switch table(file.text, file: file.path, lines: lines) {
        case .parsed(let root): return .parsed(TOMLDocument(root: root, index: index, lines: lines))
        case .invalid(let diagnostic): return .invalid(diagnostic)
        }
    }

    private enum TableOutcome {
        case parsed(TOMLTable)
        case invalid(Diagnostic)
    }

    private static func table(_ text: String, file: String, lines: SourceLines) -> TableOutcome {
        do {
            return .parsed(try TOMLTable(string: text))
        } catch let error as TOMLParseError {
            let position = error.source.begin
            return .invalid(Diagnostic(file: file, line: position.line, column: position.column,
                                       sourceLine: lines[position.line], message: "invalid TOML: \(error.description)"))
        } catch {
            return .invalid(Diagnostic(file: file, message: "invalid TOML: \(error)"))
        }
    }
}
