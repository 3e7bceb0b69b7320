import CaskEngine
import CipherCask
import Foundation
import PeerKit
import RNCryptorCodec

/// `cask-bench import`: a JSON Lines file of N events (snake_case keys, ISO 8601 dates) imported
/// as one atomic batch with `importJSON(contentsOf:)`: objects a second and the growth of the
/// peak resident set (`VmHWM`); then, given `--cask`, through `cask import` (the child's
/// `ru_maxrss`), and the SQLCipher shell's `.import`. Every object must be stored.
enum ImportCommand: BenchCommand {
  static let name = "import"
  static let abstract = "importJSON(contentsOf:) and cask import of N events: objects/s and peak memory growth."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "20,000 events instead of 750,000 (a few seconds, for CI)."),
    ("--count N", "How many events to import."),
    ("--cask PATH", "Also time this cask binary's 'import' of the same file."),
    ("--dir DIR", "Where the scratch store and file go (default /tmp)."),
    ResultsDestination.option,
  ]

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let count = try options.positive("--count") ?? (quick ? 20_000 : 750_000)
    let cask = try options.value("--cask")
    let sqlcipher = findOnPath("sqlcipher")
    try options.measure { results, scratch in
      let file = "\(scratch)/events.jsonl"
      let rows = "\(scratch)/events.rows"
      let bytes = try writeEvents(count, to: file, rows: sqlcipher == nil ? nil : rows)
      printToStandardError("import: \(count) events, \(bytes / 1_000_000) MB of JSON Lines")
      var paths = [try measureLibrary(file: file, count: count, in: scratch)]
      if let cask { paths.append(try measureBinary(cask, file: file, count: count, in: scratch)) }
      if let sqlcipher { paths.append(try measureSQLCipher(sqlcipher, rows: rows, count: count, in: scratch)) }
      if sqlcipher == nil {
        printToStandardError("sqlcipher .import: not measured (no sqlcipher shell on PATH: Debian's sqlcipher package)")
      }
      try results.write(paths, size: count)
    }
  }

  /// One way of importing the file, as `import-<count>.json` holds it.
  struct Measured: Codable {
    /// `importJSON(contentsOf:)`, `cask import` or `sqlcipher .import`.
    let path: String
    let objects: Int
    let seconds: Double
    /// User and system CPU seconds of the import, where the process measured is this one.
    let cpuSeconds: Double?
    /// Growth of the peak resident set: this process's `VmHWM`, or the child's `ru_maxrss`.
    let peakGrowthBytes: Int?
    /// What the path is, beyond its name.
    let note: String
  }

  /// Writes `count` events, one a line, through a small buffer (the file is never in memory);
  /// with `rows`, the same events as `id` U+001F `line` rows for the SQLCipher shell's `.import`.
  ///
  /// - Returns: the file's size.
  static func writeEvents(_ count: Int, to path: String, rows: String?) throws -> Int {
    func create(_ path: String) throws -> FileHandle {
      guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path)
      else { throw BenchError("cannot create \(path)") }
      return handle
    }
    let handle = try create(path)
    defer { try? handle.close() }
    let rowHandle = try rows.map(create)
    defer { try? rowHandle?.close() }
    var rowChunk = ""
    let cities = ["Utrecht", "Lisbon", "Osaka", "Quito", "Tartu", "Accra", "Perth"]
    var chunk = ""
    var total = 0
    for index in 0..<count {
      let day = 1 + index % 28
      let city = cities[index % cities.count]
      let line =
        #"{"title":"Concert \#(index)","date":"2026-03-\#(day < 10 ? "0" : "")\#(day)T18:00:00Z","#
        + #""venue":"Hall \#(index % 97)","city":"\#(city)","country":"NL","attendees":["ann","bo"],"#
        + #""fb_url":"https://example.com/e/\#(index)","ticket_url":null,"id":"ev-\#(index)"}"# + "\n"
      chunk += line
      if rowHandle != nil { rowChunk += "ev-\(index)\u{1F}" + line }
      if chunk.utf8.count >= 1 << 20 || index == count - 1 {
        total += chunk.utf8.count
        try handle.write(contentsOf: Data(chunk.utf8))
        chunk = ""
        try rowHandle?.write(contentsOf: Data(rowChunk.utf8))
        rowChunk = ""
      }
    }
    return total
  }

  static func measureLibrary(file: String, count: Int, in directory: String) throws -> Measured {
    let keys = try RNCryptor.Keys.random()
    let options = CaskStore.Options(durability: .never, autoCompaction: nil)
    let store = try CaskStore(path: "\(directory)/library.cask", keys: keys, options: options)
    let events = store.collection(BenchEvent.self, named: "events")
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    decoder.dateDecodingStrategy = .iso8601
    ProcessMemory.releaseFreeMemory()
    let before = ProcessFigures.peakRSS()
    let cpuBefore = CPUTime.process()
    let (result, seconds) = try Stopwatch.timed {
      try events.importJSON(contentsOf: URL(fileURLWithPath: file), decoder: decoder)
    }
    let cpu = CPUTime.process() - cpuBefore
    let growth = ProcessFigures.peakRSS() - before
    guard result.inserted == count, store.count(inGroup: "events") == count else {
      throw BenchError("the import stored \(result.inserted) of \(count) events")
    }
    try store.close()
    return Measured(
      path: "importJSON(contentsOf:)", objects: count, seconds: seconds, cpuSeconds: cpu, peakGrowthBytes: growth,
      note: "one atomic batch, VmHWM growth")
  }

  static func measureBinary(_ cask: String, file: String, count: Int, in directory: String) throws -> Measured {
    let path = "\(directory)/binary.cask"
    var environment = ProcessInfo.processInfo.environment
    environment["CASK_PASSWORD"] = "bench-import-password-9f2c"
    _ = try run(cask, ["create", path], environment: environment)
    let (peak, seconds) = try Stopwatch.timed {
      try run(cask, ["import", path, file, "--collection", "events", "--id-key", "id"], environment: environment)
    }
    return Measured(
      path: "cask import", objects: count, seconds: seconds, cpuSeconds: nil, peakGrowthBytes: peak,
      note: "the child's peak RSS")
  }

  /// The same rows through the SQLCipher shell's `.import`: a table keyed by id (as a store's
  /// keys are), the JSON as the body, one transaction (`.import` makes one), `synchronous =
  /// OFF` as the library's `.never`, the benchmark's page settings (`peer-sqlcipher`). Counted
  /// afterwards; the run fails unless every row is there.
  static func measureSQLCipher(_ shell: String, rows: String, count: Int, in directory: String) throws -> Measured {
    let script = """
      PRAGMA key = 'bench-import-password-9f2c';
      PRAGMA cipher_page_size = 4096;
      PRAGMA synchronous = OFF;
      CREATE TABLE events (id TEXT PRIMARY KEY, body TEXT);
      .mode ascii
      .separator "\\037" "\\n"
      .import \(rows) events
      .mode list
      SELECT count(*) FROM events;

      """
    let (printed, seconds) = try Stopwatch.timed {
      try Subprocess.output(
        shell, ["\(directory)/sqlcipher.db"], executable: URL(fileURLWithPath: shell), input: script)
    }
    let stored = Int(printed.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "")
    guard stored == count else {
      throw BenchError("sqlcipher .import stored \(stored.map(String.init) ?? "no count") of \(count) rows")
    }
    return Measured(
      path: "sqlcipher .import", objects: count, seconds: seconds, cpuSeconds: nil, peakGrowthBytes: nil,
      note: "SQLCipher shell, table keyed by id, one transaction, synchronous OFF")
  }

  /// The first executable `name` on `PATH`.
  static func findOnPath(_ name: String) -> String? {
    let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// Runs a child to its end; returns the peak resident set of the largest child so far.
  static func run(_ program: String, _ arguments: [String], environment: [String: String]) throws -> Int {
    _ = try Subprocess.output(
      program, arguments, executable: URL(fileURLWithPath: program), environment: environment)
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return usage.ru_maxrss * 1024
  }

}
