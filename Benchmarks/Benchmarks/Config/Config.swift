import Benchmark
import ClickawayConfig

/// Parse + validate, as the daemon's loader thread and `clickawayctl check` do it: bytes in,
/// a configuration or rendered diagnostics out.
@inline(never)
func loadOrRender(_ file: ConfigFile) -> Int {
    do {
        return try ConfigLoader.load([file]).popupCount
    } catch {
        return error.description.utf8.count
    }
}

func popups(_ count: Int, regions: Int = 1) -> String {
    (0..<count).map { i in
        "[[popup]]\nname = \"p\(i)\"\nwindow = { class = \"C\(i)\" }\nanchors = [ { rect = [\(i % 2000), 0, 10, 10] } ]\n"
            + (0..<regions).map { r in "  [[popup.region]]\n  name = \"r\(r)\"\n  rect = [\(r), 1, 50, 50]\n  slop = 2\n" }.joined()
            + "\n"
    }.joined()
}

/// A generated configuration of at least `bytes`: popups with three regions each.
func generated(atLeast bytes: Int) -> String {
    var count = 1
    while popups(count, regions: 3).utf8.count < bytes { count *= 2 }
    var low = count / 2, high = count
    while low + 1 < high {
        let middle = (low + high) / 2
        if popups(middle, regions: 3).utf8.count < bytes { low = middle } else { high = middle }
    }
    return popups(high, regions: 3)
}

/// Inputs of at most 64 KiB built to hurt a parser: the families that crashed, hung or
/// bloated the toml++-based loader, and their larger relatives.
/// Lines made by `line(i)` for i = 0, 1, ... while they fit in `limit` bytes.
func numbered(upTo limit: Int, _ line: (Int) -> String) -> String {
    var text = ""
    var i = 0
    while true {
        let next = line(i)
        guard text.utf8.count + next.utf8.count <= limit else { return text }
        text += next
        i += 1
    }
}

let pathological: [(String, String)] = {
    let limit = 64 * 1024
    func fill(_ head: String, _ unit: String, _ tail: String = "") -> String {
        head + String(repeating: unit, count: (limit - head.utf8.count - tail.utf8.count) / unit.utf8.count) + tail
    }
    let longName = String(repeating: "k", count: 500)
    return [
        ("64 KiB of [ (arrays nested without end)", fill("x = ", "[")),
        ("64 KiB of {a = (inline tables nested without end)", fill("x = ", "{a = ")),
        ("64 KiB of closed arrays 126 deep, table after table",
         fill("", "[[a]]\nk = " + String(repeating: "[", count: 126) + String(repeating: "]", count: 126) + "\n")),
        ("64 KiB dotted key of one-letter parts", fill("", "a.", "a = 1\n")),
        ("64 KiB dotted key of 128 parts of 500 letters",
         Array(repeating: longName, count: 128).joined(separator: ".") + " = 1\n"),
        ("10,000-part table header", "[" + Array(repeating: "popup", count: 10_000).joined(separator: ".") + "]\n"),
        ("64 KiB array of integers", fill("a = [", "1,", "]\n")),
        ("64 KiB rect of integers", fill("[[popup]]\nname = \"p\"\nrect = [", "1,", "]\n")),
        ("64 KiB of [[popup]] (13,000 errors)", fill("", "[[popup]]\n")),
        ("64 KiB of popups with unknown parents", fill("", "[[popup]]\nname = \"p\"\nparent = \"q\"\nrect = [0, 0, 1, 1]\n")),
        ("64 KiB of unknown keys", numbered(upTo: limit) { "k\($0) = 1\n" }),
        ("64 KiB basic string of escapes", fill("a = \"", "\\u0041", "\"\n")),
        ("64 KiB parent name (no did-you-mean for it)", fill("[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\nparent = \"", "x", "\"\n")),
        ("64 KiB of one-line errors on one line", fill("a = [", "true, ", "x]\n")),
    ]
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        // CPU time beside wall-clock time: on a shared machine a run waits for the CPU.
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident],
        timeUnits: .microseconds,
        maxDuration: .seconds(3),
        maxIterations: 2_000
    )

    let five = ConfigFile(path: "big500.toml", text: popups(500))
    Benchmark("parse + validate, 500 popups (\(five.bytes.count / 1024) KiB)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(loadOrRender(five)) }
    }

    let mebibyte = ConfigFile(path: "1mib.toml", text: generated(atLeast: 1 << 20))
    Benchmark("parse + validate, generated 1 MiB (\(mebibyte.bytes.count) bytes)",
              configuration: .init(maxIterations: 200)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(loadOrRender(mebibyte)) }
    }

    for (name, text) in pathological {
        precondition(text.utf8.count <= 64 * 1024, "\(name): \(text.utf8.count) bytes")
        let file = ConfigFile(path: "bad.toml", text: text)
        Benchmark("pathological: \(name)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(loadOrRender(file)) }
        }
    }
}
