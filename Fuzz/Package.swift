// swift-tools-version: 6.1
import PackageDescription
import class Foundation.NSString

// SwiftPM names a path dependency after its folder, and a clone may be called anything.
let rootPackage = ((#filePath as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
let rootIdentity = (rootPackage as NSString).lastPathComponent.lowercased()

// The libFuzzer target lives in its own package: it links libFuzzer's main, so the main
// build must never see it. `make fuzz` builds it with -sanitize=fuzzer,address.
let package = Package(
    name: "clickaway-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: rootPackage),
    ],
    targets: [
        .executableTarget(
            name: "ConfigFuzzer",
            dependencies: [
                .product(name: "ClickawayConfig", package: rootIdentity),
                .product(name: "ClickawayCore", package: rootIdentity),
            ]
        ),
    ]
)
