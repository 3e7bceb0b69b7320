// swift-tools-version:6.0
// The benchmark package: a separate package so that `swift test` in the root never builds or
// runs benchmarks. Build with `swift build -c release --package-path Benchmarks`.
//
// `cask-bench peers` runs each engine it compares in its own process, one `peer-*` executable
// per library: SQLite and SQLCipher export the same C symbols and cannot share a process, and a
// process per engine gives each one its own peak RSS. CipherCask runs the same way (`peer-cask`),
// through the same workload driver (`PeerKit`).
import PackageDescription

let package = Package(
  name: "CipherCaskBenchmarks",
  products: [
    .executable(name: "cask-bench", targets: ["cask-bench"]),
    .executable(name: "peer-cask", targets: ["peer-cask"]),
    .executable(name: "peer-sqlite", targets: ["peer-sqlite"]),
    .executable(name: "peer-sqlcipher", targets: ["peer-sqlcipher"]),
    .executable(name: "peer-lmdb", targets: ["peer-lmdb"]),
    .executable(name: "peer-leveldb", targets: ["peer-leveldb"]),
  ],
  dependencies: [
    .package(name: "CipherCask", path: "..")
  ],
  targets: [
    // Linux headers the Glibc module leaves out (malloc.h, sys/vfs.h); header only.
    .systemLibrary(name: "CLinuxSystem"),
    .executableTarget(
      name: "cask-bench",
      dependencies: [
        "PeerKit",
        .product(name: "RNCryptorCodec", package: "CipherCask"),
        .product(name: "CaskEngine", package: "CipherCask"),
        .product(name: "CipherCask", package: "CipherCask"),
        .product(name: "CipherCaskSync", package: "CipherCask"),
        .target(name: "CLinuxSystem", condition: .when(platforms: [.linux])),
      ]
    ),

    // MARK: The peers

    .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(name: "CSQLCipher", providers: [.apt(["libsqlcipher-dev"])]),
    .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"])]),
    .systemLibrary(name: "CLevelDB", providers: [.apt(["libleveldb-dev"])]),
    .target(
      name: "PeerKit",
      dependencies: [.product(name: "RNCryptorCodec", package: "CipherCask")]
    ),
    .executableTarget(
      name: "peer-cask",
      dependencies: ["PeerKit", .product(name: "CipherCask", package: "CipherCask")]
    ),
    .executableTarget(name: "peer-sqlite", dependencies: ["PeerKit", "CSQLite"]),
    .executableTarget(name: "peer-sqlcipher", dependencies: ["PeerKit", "CSQLCipher"]),
    .executableTarget(name: "peer-lmdb", dependencies: ["PeerKit", "CLMDB"]),
    .executableTarget(name: "peer-leveldb", dependencies: ["PeerKit", "CLevelDB"]),
  ],
  swiftLanguageModes: [.v6]
)
