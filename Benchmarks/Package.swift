// swift-tools-version: 6.1
import PackageDescription
import class Foundation.NSString

// SwiftPM names a path dependency after its folder, and a clone may be called anything.
let rootPackage = ((#filePath as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
let rootIdentity = (rootPackage as NSString).lastPathComponent.lowercased()

// Benchmarks live in their own package so the main build and test run never pull in
// the benchmark harness. Run: `cd Benchmarks && swift package benchmark`.
let package = Package(
    name: "clickaway-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: rootPackage),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Decisions",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ClickawayCore", package: rootIdentity),
            ],
            path: "Benchmarks/Decisions",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Config",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ClickawayConfig", package: rootIdentity),
            ],
            path: "Benchmarks/Config",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
