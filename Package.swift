// swift-tools-version:6.0
import PackageDescription

// CI's sanitizer runs test a few modules each. CASK_TESTS declares only the test targets such a
// run uses, with the modules and tools they need, so that a build instrumented for it compiles
// nothing it does not run (.ci/run). Unset, the package is whole; no product changes meaning.
//   CASK_TESTS=engine   the codec's and the engine's tests, with the crash writer and the fuzz
//                       targets they start (no sync module, no `cask`, no other tests)
//   CASK_TESTS=collections  the codec's, engine's and collections' tests, with what the
//                       engine's start (no sync module, no `cask`, no other tests)
//   CASK_TESTS=library  the codec's, engine's, collections' and sync's tests, with the crash
//                       writer (no `cask`, its parser, its tests or the fuzz targets)
let testScope = Context.environment["CASK_TESTS"]
let leftOut: Set<String> =
  switch testScope {
  case "engine":
    ["CipherCaskSync", "cask", "CipherCaskTests", "CaskCLITests", "CipherCaskSyncTests", "CaskCLIKitTests"]
  case "collections":
    ["CipherCaskSync", "cask", "CaskCLITests", "CipherCaskSyncTests", "CaskCLIKitTests"]
  case "library":
    [
      "cask", "CaskCLIKit", "CaskCLITests", "CaskCLIKitTests", "FuzzSupport", "fuzz-rncryptor", "fuzz-segment",
      "fuzz-hint", "fuzz-checkpoint", "fuzz-header", "fuzz-store", "fuzz-import", "fuzz-binary-decoder",
      "fuzz-cli-args",
    ]
  case nil, "": []
  case let other?: fatalError("CASK_TESTS=\(other): use engine, collections or library, or leave it unset")
  }

let package = Package(
  name: "CipherCask",
  products: [
    .library(name: "RNCryptorCodec", targets: ["RNCryptorCodec"]),
    .library(name: "CaskEngine", targets: ["CaskEngine"]),
    .library(name: "CipherCask", targets: ["CipherCask"]),
    .library(name: "CipherCaskSync", targets: ["CipherCaskSync"]),
    .executable(name: "cask", targets: ["cask"]),
  ],
  targets: [
    .systemLibrary(
      name: "CLibCrypto",
      providers: [.apt(["libssl-dev"])]
    ),
    // The processor's CRC-32C instruction, as one inline function in a header (no C sources).
    .systemLibrary(
      name: "CCRC32C"
    ),
    // Copies out of a file mapping that a SIGBUS turns into a failed copy: inline functions
    // in a header (no C sources); CaskEngine's FileMapping only.
    .systemLibrary(
      name: "CMappedCopy"
    ),
    // The operating system below every module: the one EINTR retry, standard descriptors, paths.
    .target(
      name: "CaskPlatform",
      dependencies: ["CProcessControl"]
    ),
    // prctl, which Swift cannot call directly (it takes variable arguments): two inline
    // functions in a header, no C source; CaskPlatform only.
    .systemLibrary(
      name: "CProcessControl"
    ),
    .target(
      name: "RNCryptorCodec",
      dependencies: ["CLibCrypto", "CaskPlatform"]
    ),
    .target(
      name: "CaskEngine",
      dependencies: ["RNCryptorCodec", "CaskPlatform", "CCRC32C", "CMappedCopy"]
    ),
    .target(
      name: "CipherCask",
      dependencies: ["CaskEngine", "RNCryptorCodec"]
    ),
    .target(
      name: "CaskCLIKit"
    ),
    .executableTarget(
      name: "cask",
      dependencies: ["CaskCLIKit", "CaskPlatform", "CipherCask", "CipherCaskSync"]
    ),
    .target(
      name: "CipherCaskSync",
      // RNCryptorCodec: end-to-end mode seals each record and derives its key with scrypt.
      dependencies: ["CipherCask", "RNCryptorCodec"]
    ),
    .target(
      name: "CaskTestSupport",
      dependencies: ["CaskEngine", "RNCryptorCodec"],
      path: "Tests/CaskTestSupport"
    ),
    .executableTarget(
      name: "cask-crash-writer",
      dependencies: ["CaskEngine", "CipherCask", "CaskTestSupport", "RNCryptorCodec"],
      path: "Tests/CrashWriter"
    ),
    .target(
      name: "FuzzSupport",
      dependencies: ["CaskEngine", "CaskTestSupport", "RNCryptorCodec"],
      path: "Fuzz/Support"
    ),
    .executableTarget(name: "fuzz-rncryptor", dependencies: ["FuzzSupport", "RNCryptorCodec"], path: "Fuzz/RNCryptor"),
    .executableTarget(name: "fuzz-segment", dependencies: ["FuzzSupport", "CaskEngine"], path: "Fuzz/Segment"),
    .executableTarget(
      name: "fuzz-hint", dependencies: ["FuzzSupport", "CaskEngine", "CaskTestSupport", "RNCryptorCodec"],
      path: "Fuzz/Hint"),
    .executableTarget(
      name: "fuzz-checkpoint", dependencies: ["FuzzSupport", "CaskEngine", "RNCryptorCodec"], path: "Fuzz/Checkpoint"),
    .executableTarget(
      name: "fuzz-header", dependencies: ["FuzzSupport", "CaskEngine", "RNCryptorCodec"], path: "Fuzz/Header"),
    .executableTarget(
      name: "fuzz-store", dependencies: ["FuzzSupport", "CaskEngine", "CaskTestSupport", "RNCryptorCodec"],
      path: "Fuzz/Store"),
    .executableTarget(name: "fuzz-import", dependencies: ["FuzzSupport", "CipherCask"], path: "Fuzz/Import"),
    .executableTarget(
      name: "fuzz-binary-decoder", dependencies: ["FuzzSupport", "CipherCask"], path: "Fuzz/BinaryDecoder"),
    .executableTarget(name: "fuzz-cli-args", dependencies: ["FuzzSupport", "CaskCLIKit"], path: "Fuzz/CLIArgs"),
    .testTarget(
      name: "CaskEngineTests",
      dependencies: ["CaskEngine", "CaskTestSupport"],
      exclude: ["Regressions"]
    ),
    .testTarget(
      name: "CipherCaskTests",
      dependencies: ["CipherCask", "CaskTestSupport"],
      exclude: ["Regressions"]
    ),
    .testTarget(
      name: "CaskCLITests",
      dependencies: ["CipherCask", "CaskTestSupport"],
      exclude: ["Regressions"]
    ),
    .testTarget(
      name: "CipherCaskSyncTests",
      dependencies: ["CipherCaskSync", "CaskTestSupport"],
      exclude: ["Server"]
    ),
    .testTarget(
      name: "CaskCLIKitTests",
      dependencies: ["CaskCLIKit"],
      path: "Tests/CaskCLIKitTests"
    ),
    .testTarget(
      name: "RNCryptorCodecTests",
      // CLibCrypto: PBKDF2Tests checks the codec's PBKDF2 against OpenSSL's own.
      dependencies: ["RNCryptorCodec", "CaskTestSupport", "CLibCrypto"],
      resources: [.copy("Resources/vectors")]
    ),
  ],
  swiftLanguageModes: [.v6]
)

package.targets.removeAll { leftOut.contains($0.name) }
package.products.removeAll { leftOut.contains($0.name) }
