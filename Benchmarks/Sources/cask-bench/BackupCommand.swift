import CaskEngine
import Foundation
import PeerKit
import RNCryptorCodec

/// `cask-bench backup`: what `backup(to:)` and `rekeyedCopy(to:password:)` cost, beside the
/// plain copy of the same files (`cp -r`, then `sync` of every file and of the directory, so
/// that it is durable as the backup is) measured in the same run. The three take turns, run
/// after run. Every copy is opened and must hold every key, or the run fails.
enum BackupCommand: BenchCommand {
  static let name = "backup"
  static let abstract = "Online backup and rekeyed copy of a store, beside cp -r + sync of its files."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "20,000 keys and 3 runs, instead of 200,000 and 5."),
    ("--keys N", "Keys in the store (1 KiB values, 16-byte keys)."),
    ("--dir DIR", "Where the scratch store and its copies go (default /tmp)."),
    ResultsDestination.option,
  ]

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let keys = try options.number("--keys", in: 1...10_000_000) ?? (quick ? 20_000 : 200_000)
    try options.measure { results, scratch in
      try results.write(measure(in: scratch, keys: keys, runs: quick ? 3 : 5), size: keys)
    }
  }

  /// What `backup-<keys>.json` holds.
  struct Figures: Codable {
    let keys: Int
    /// Bytes of the store's files, which every copy is measured against.
    let storeBytes: UInt64
    /// `cp -r` + `sync`, `backup(to:)` and `rekeyedCopy(to:keys:)`.
    let copies: [TimedRuns]
  }

  static func measure(in directory: String, keys count: Int, runs: Int) throws -> Figures {
    let path = "\(directory)/store.cask"
    let storeKeys = try RNCryptor.Keys.random()
    printToStandardError("backup: writing \(count) values of 1 KiB")
    let store = try CaskStore(
      path: path, keys: storeKeys, options: .init(durability: .never, segmentSizeLimit: 64 << 20, autoCompaction: nil))
    defer { try? store.close() }
    var value = Data(count: 1024)
    var batch = 0
    while batch * 1000 < count {
      try store.batch { writes in
        for index in (batch * 1000)..<min(count, (batch + 1) * 1000) {
          value[0] = UInt8(truncatingIfNeeded: index)
          try writes.put(value, forKey: String(format: "key-%012d", index))
        }
      }
      batch += 1
    }
    try store.sync()
    // Hints for the sealed segments, as a store that has been open a while has them.
    try store.compact()
    let bytes = UInt64(ProcessFigures.fileBytes(path))
    guard bytes > 0 else { throw BenchError("backup: cannot measure the store's files at \(path)") }

    var copySeconds: [Double] = []
    var backupSeconds: [Double] = []
    var rekeySeconds: [Double] = []
    for run in 1...runs {
      printToStandardError("backup: run \(run) of \(runs)")
      let copy = "\(directory)/cp-\(run)"
      copySeconds.append(
        try Stopwatch.seconds {
          _ = try Subprocess.output("cp", ["-r", path, copy])
          let files = try FileManager.default.contentsOfDirectory(atPath: copy).map { "\(copy)/\($0)" }
          _ = try Subprocess.output("sync", files + [copy])
        })
      try FileManager.default.removeItem(atPath: copy)

      let backup = "\(directory)/backup-\(run)"
      backupSeconds.append(try Stopwatch.seconds { try store.backup(to: backup) })
      try expectKeys(count, at: backup, keys: storeKeys)
      try FileManager.default.removeItem(atPath: backup)

      let rekeyed = "\(directory)/rekeyed-\(run)"
      let newKeys = try RNCryptor.Keys.random()
      rekeySeconds.append(try Stopwatch.seconds { try store.rekeyedCopy(to: rekeyed, keys: newKeys) })
      try expectKeys(count, at: rekeyed, keys: newKeys)
      try FileManager.default.removeItem(atPath: rekeyed)
    }

    let copies = [
      TimedRuns(name: "cp -r + sync", seconds: copySeconds), TimedRuns(name: "backup(to:)", seconds: backupSeconds),
      TimedRuns(name: "rekeyedCopy(to:keys:)", seconds: rekeySeconds),
    ]
    return Figures(keys: count, storeBytes: bytes, copies: copies)
  }

  /// Opens the copy at `path` and checks that it holds `count` keys.
  private static func expectKeys(_ count: Int, at path: String, keys: RNCryptor.Keys) throws {
    let copy = try CaskStore(path: path, keys: keys, options: .init(createIfMissing: false, readOnly: true))
    defer { try? copy.close() }
    guard copy.count == count else { throw BenchError("the copy at \(path) holds \(copy.count) keys, not \(count)") }
  }
}
