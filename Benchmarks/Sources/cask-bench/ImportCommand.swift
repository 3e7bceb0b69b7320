import CaskEngine
import CipherCask
import Foundation
import PeerKit
import RNCryptorCodec

/// `cask-bench import`: a large JSON Lines file imported as one atomic batch. Writes N events
/// (`BenchEvent`, in the Core Data events example's JSON: snake_case keys, ISO 8601 dates) to
/// a scratch directory,
/// imports them with `importJSON(contentsOf:)` and reports objects a second and how much the
/// process's peak resident set (`VmHWM`) grew; then, given `--cask`, the same file through the
/// `cask import` binary, whose peak is the child's `ru_maxrss`. The run fails unless every
/// object is in the store afterwards.
enum ImportCommand: BenchCommand {
  static let name = "import"
  static let abstract = "importJSON(contentsOf:) and cask import of N events: objects/s and peak memory growth."
  static let usage = "cask-bench import [--quick] [--count N] [--cask PATH] [--dir DIR]"
  static let options: [(flag: String, help: String)] = [
    ("--quick", "20,000 events instead of 750,000 (a few seconds, for CI)."),
    ("--count N", "How many events to import."),
    ("--cask PATH", "Also time this cask binary's 'import' of the same file."),
    ("--dir DIR", "Where the scratch store and file go (default /tmp)."),
    ("-h, --help", "Show help information."),
  ]

  static func run(arguments: [String]) throws {
    var options = Options(arguments)
    let quick = options.flag("--quick")
    let countText = try options.value("--count")
    let cask = try options.value("--cask")
    let base = try options.value("--dir") ?? "/tmp"
    try options.finish()
    var count = quick ? 20_000 : 750_000
    if let countText {
      guard let value = Int(countText), value > 0 else {
        throw UsageError("--count takes a positive whole number, not '\(countText)'")
      }
      count = value
    }
    let scratch = try ScratchDirectory(in: base)
    defer { scratch.remove() }
    let file = "\(scratch.path)/events.jsonl"
    let bytes = try writeEvents(count, to: file)
    printToStandardError("import: \(count) events, \(bytes / 1_000_000) MB of JSON Lines")
    print(try measureLibrary(file: file, count: count, in: scratch.path))
    if let cask { print(try measureBinary(cask, file: file, count: count, in: scratch.path)) }
  }

  /// Writes `count` events, one a line, through a small buffer (the file is never in memory).
  ///
  /// - Returns: the file's size.
  static func writeEvents(_ count: Int, to path: String) throws -> Int {
    guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path)
    else { throw BenchError("cannot create \(path)") }
    defer { try? handle.close() }
    let cities = ["Utrecht", "Lisbon", "Osaka", "Quito", "Tartu", "Accra", "Perth"]
    var chunk = ""
    var total = 0
    for index in 0..<count {
      let day = 1 + index % 28
      let city = cities[index % cities.count]
      chunk +=
        #"{"title":"Concert \#(index)","date":"2026-03-\#(day < 10 ? "0" : "")\#(day)T18:00:00Z","#
        + #""venue":"Hall \#(index % 97)","city":"\#(city)","country":"NL","attendees":["ann","bo"],"#
        + #""fb_url":"https://example.com/e/\#(index)","ticket_url":null,"id":"ev-\#(index)"}"# + "\n"
      if chunk.utf8.count >= 1 << 20 || index == count - 1 {
        total += chunk.utf8.count
        try handle.write(contentsOf: Data(chunk.utf8))
        chunk = ""
      }
    }
    return total
  }

  /// This process's user and system CPU time so far.
  static func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }

  static func peakResident() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
      let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes * 1024
  }

  static func measureLibrary(file: String, count: Int, in directory: String) throws -> String {
    let keys = try RNCryptor.Keys.random()
    let options = CaskStore.Options(durability: .never, autoCompaction: nil)
    let store = try CaskStore(path: "\(directory)/library.cask", keys: keys, options: options)
    let events = store.collection(BenchEvent.self, named: "events")
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    decoder.dateDecodingStrategy = .iso8601
    ProcessMemory.releaseFreeMemory()
    let before = peakResident()
    let cpuBefore = cpuSeconds()
    let start = ProcessFigures.now()
    let result = try events.importJSON(contentsOf: URL(fileURLWithPath: file), decoder: decoder)
    let seconds = Double(ProcessFigures.now() - start) / 1e9
    let cpu = cpuSeconds() - cpuBefore
    let growth = peakResident() - before
    guard result.inserted == count, store.count(inGroup: "events") == count else {
      throw BenchError("the import stored \(result.inserted) of \(count) events")
    }
    try store.close()
    return line("importJSON(contentsOf:)", count: count, seconds: seconds, peakGrowth: growth, note: "VmHWM growth")
      + "; \(Int(Double(count) / cpu)) objects per CPU second (user + system), which a loaded machine slows less"
  }

  static func measureBinary(_ cask: String, file: String, count: Int, in directory: String) throws -> String {
    let path = "\(directory)/binary.cask"
    var environment = ProcessInfo.processInfo.environment
    environment["CASK_PASSWORD"] = "bench-import-password-9f2c"
    _ = try run(cask, ["create", path], environment: environment)
    let start = ProcessFigures.now()
    let peak = try run(
      cask, ["import", path, file, "--collection", "events", "--id-key", "id"], environment: environment)
    let seconds = Double(ProcessFigures.now() - start) / 1e9
    return line("cask import", count: count, seconds: seconds, peakGrowth: peak, note: "child's peak RSS")
  }

  /// Runs a child to its end; returns its peak resident set.
  static func run(_ program: String, _ arguments: [String], environment: [String: String]) throws -> Int {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw BenchError("'\(program) \(arguments.first ?? "")' exited with \(process.terminationStatus)")
    }
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return usage.ru_maxrss * 1024
  }

  static func line(_ what: String, count: Int, seconds: Double, peakGrowth: Int, note: String) -> String {
    let rate = Int(Double(count) / seconds)
    let mib = Double(peakGrowth) / Double(1 << 20)
    return "\(what): \(count) objects in \(String(format: "%.2f", seconds)) s, \(rate) objects/s, "
      + "peak memory \(String(format: "%.1f", mib)) MiB (\(note))"
  }
}
