import Foundation
import ProcessSupport
import Testing

/// The README's picture, docs/example.svg, is what `clickawayctl show` draws now from
/// docs/example.toml, with the command line that file gives; and what it draws is what `hit`
/// decides.
@Suite("The README's picture")
struct ReadmePictureTests {
    @Test func thePictureIsWhatShowDrawsNow() throws {
        let example = try Repository.text("docs/example.toml")
        let line = try #require(example.split(separator: "\n").first { $0.hasPrefix("#   clickawayctl show ") },
                                "docs/example.toml does not say how the picture is drawn")
        var arguments = line.dropFirst(1).split(separator: " ").map(String.init)
        let svg = try #require(arguments.firstIndex(of: "--svg"))
        #expect(arguments[svg + 1] == "docs/example.svg")
        arguments[svg + 1] = "-"
        arguments[0] = DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl").path
        let run = try ProgramRun.run(arguments, environment: ProcessInfo.processInfo.environment,
                                     directory: Repository.file(".").path)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.stdout == (try Repository.text("docs/example.svg")),
                "docs/example.svg is not what `\(line.dropFirst(4))` draws now: run it again in the repository")
        #expect(try Repository.text("README.md").contains("](docs/example.svg)"), "the README does not show the picture")

        let opened = arguments.indices.filter { arguments[$0] == "--open" }.map { arguments[$0 + 1] }
        try ShowSVGTests().check(config: example, open: opened, screen: (960, 400))
    }
}
