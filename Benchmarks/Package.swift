// swift-tools-version:6.0
// The benchmark package: a separate package so that `swift test` in the root never builds or
// runs benchmarks. Build with `swift build -c release --package-path Benchmarks`.
import PackageDescription

let package = Package(
  name: "CipherCaskBenchmarks",
  products: [
    .executable(name: "cask-bench", targets: ["cask-bench"])
  ],
  dependencies: [
    .package(name: "CipherCask", path: "..")
  ],
  targets: [
    .executableTarget(
      name: "cask-bench",
      dependencies: [
        .product(name: "RNCryptorCodec", package: "CipherCask")
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
