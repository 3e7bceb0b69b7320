import CaskCLIKit
import CipherCask

/// `cask compact STORE`.
enum CompactCommand: Subcommand {
  static var spec: CommandSpec { .compact }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let report = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let progress = ProcessIO.progressBar("Compacting", total: store.stats().liveBytes)
      defer { progress?.finish() }
      return try store.compact(droppingDamagedRecords: arguments.flag("drop-damaged"))
    }
    if arguments.flag("json") {
      try JSONOutput.write(Reports.Compaction(store: path, report: report))
    } else if let report {
      StandardStream.output.write(
        "Compacted store '\(path)': \(counted(report.inputSegments, "segment")) "
          + "(\(ByteCount.format(report.bytesBefore))) rewritten into \(report.outputSegments) "
          + "(\(ByteCount.format(report.bytesAfter))), \(counted(report.recordsCopied, "live record")) copied.\n")
    } else {
      StandardStream.output.write("Nothing to compact in store '\(path)'.\n")
    }
    // Salvaged records are never dropped quietly: each on stderr, and the exit status says so.
    guard let damaged = report?.damagedRecords, !damaged.isEmpty else { return }
    var text = ""
    for region in damaged {
      text += "Left out \(region.file) at offset \(region.offset), \(region.length) bytes: \(region.reason)\n"
    }
    StandardStream.error.write(text)
    throw CLIError.failure(
      "store '\(path)': \(counted(damaged.count, "damaged live record")) left out; their keys are gone")
  }
}
