import CaskCLIKit
import CipherCask
import Foundation

/// `cask salvage STORE NEWSTORE`: every value that still reads, copied into a new store.
enum SalvageCommand: Subcommand {
  static var spec: CommandSpec { .salvage }

  static let batchSize = 1000

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let destination = arguments.argument("newstore")
    // Checked before any password is asked for.
    try DestinationCheck.refuse(destination, insideStore: path)
    guard !FileManager.default.fileExists(atPath: destination) else {
      throw CLIError.failure("'\(destination)' already exists")
    }
    try StoreAccess.requireExisting(path)
    let password = try PasswordSource.password(arguments, subject: "store '\(path)'")
    // Salvage reads what is there also when the files disagree with what the store
    // authenticated (a tampered or rolled-back store opens read-only then).
    var options = StoreAccess.options(.readOnly)
    options.allowIntegrityViolations = true
    let store = try StoreAccess.open(path, password: password, options: options)
    let regions = store.stats().recovery.corruptRegions
    let unreadable = store.stats().recovery.unreadableSegments
    let (copied, skipped) = try StoreAccess.run(store) { store in
      // Ctrl-C, kill or a closed terminal: the copy stops before its next batch and removes
      // what it made, then the process ends by the signal.
      try Interruption.stoppingOnSignal { shouldContinue in
        let target = try StoreAccess.open(
          destination, password: password, options: StoreAccess.options(.readWrite, create: true))
        do {
          let result = try StoreAccess.run(target) { target in
            try copy(store, into: target, shouldContinue: shouldContinue)
          }
          if !shouldContinue() { try? FileManager.default.removeItem(atPath: destination) }
          return result
        } catch {
          // Nothing half-made stays behind: the command can be run again.
          try? FileManager.default.removeItem(atPath: destination)
          throw error
        }
      }
    }
    if arguments.flag("json") {
      try JSONOutput.write(
        Reports.Salvage(store: path, destination: destination, values: copied, skipped: Reports.skipped(skipped)))
    } else {
      StandardStream.output.write(
        "Salvaged \(counted(copied, "value")) of store \(MessageText.quoted(path)) into \(MessageText.quoted(destination))"
          + (skipped.isEmpty ? ".\n" : "; \(counted(skipped.count, "damaged value")) left out.\n"))
    }
    let lost = DamageList.lines(skipped: skipped, regions: regions, unreadable: unreadable)
    for line in lost { StandardStream.error.write(line + "\n") }
    if !lost.isEmpty {
      throw CLIError.failure(
        "store '\(path)' is damaged: \(counted(lost.count, "damaged place")) left out of '\(destination)' (listed above)"
      )
    }
  }

  /// Copies every key whose value reads into `target`, in batches; the damaged ones are
  /// returned, by place.
  private static func copy(
    _ store: CaskStore, into target: CaskStore, shouldContinue: () -> Bool
  ) throws -> (Int, [DamageList.Value]) {
    let keys = try store.keys()
    let counter = ProgressCounter()
    let progress = ProgressBar.start("Salvaging", total: UInt64(keys.count), unit: .items("values")) {
      counter.current
    }
    defer { progress?.finish() }
    var skipped: [DamageList.Value] = []
    var copied = 0
    var start = keys.startIndex
    while start < keys.endIndex, shouldContinue() {
      let end = min(start + batchSize, keys.endIndex)
      var values: [(String, Data)] = []
      for key in keys[start..<end] {
        guard shouldContinue() else { return (copied, skipped) }
        do {
          if let value = try store.get(key) { values.append((key, value)) }
        } catch CaskError.corrupt(let file, let offset, let reason) {
          skipped.append(DamageList.Value(file: (file as NSString).lastPathComponent, offset: offset, reason: reason))
        }
        counter.add(1)
      }
      try target.batch { batch in
        for (key, value) in values { try batch.put(value, forKey: key) }
      }
      copied += values.count
      start = end
    }
    return (copied, skipped)
  }
}

/// The lines that list what a salvage or `export --skip-damaged` left out: by file and
/// offset, never by key.
enum DamageList {
  /// A value that did not read.
  struct Value {
    var file: String
    var offset: UInt64
    var reason: String
  }

  static func lines(skipped: [Value], regions: [CorruptRegion], unreadable: [String]) -> [String] {
    skipped.sorted { ($0.file, $0.offset) < ($1.file, $1.offset) }.map {
      "skipped: a value in \($0.file) at offset \($0.offset): \($0.reason)"
    }
      + regions.map {
        "skipped: damaged region in \($0.file) at offset \($0.offset), \(counted(Int($0.length), "byte")): \($0.reason)"
      }
      + unreadable.map { "skipped: unreadable segment \($0)" }
  }
}
