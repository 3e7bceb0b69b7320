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
      return try store.compact()
    }
    if arguments.flag("json") { return try JSONOutput.write(Reports.Compaction(store: path, report: report)) }
    guard let report else {
      StandardStream.output.write("Nothing to compact in store '\(path)'.\n")
      return
    }
    StandardStream.output.write(
      "Compacted store '\(path)': \(counted(report.inputSegments, "segment")) (\(ByteCount.format(report.bytesBefore))) "
        + "rewritten into \(report.outputSegments) (\(ByteCount.format(report.bytesAfter))), "
        + "\(counted(report.recordsCopied, "live record")) copied.\n")
  }
}
