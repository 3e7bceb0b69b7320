import CaskCLIKit
import CipherCask
import Foundation

/// `cask verify STORE [--json]`: authenticates every record; exit 1 when anything is damaged.
enum VerifyCommand: Subcommand {
  static var spec: CommandSpec { .verify }

  /// A damaged place, as `--json` prints it.
  struct Region: Encodable {
    var file: String
    var offset: UInt64
    var length: UInt64
    var reason: String

    init(_ region: CorruptRegion) {
      file = region.file
      offset = region.offset
      length = region.length
      reason = region.reason
    }
  }

  struct Report: Encodable {
    var store: String
    var clean: Bool
    var segmentsChecked: Int
    var recordsChecked: Int
    var damage: [Region]
  }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let verified = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      let progress = ProcessIO.progressBar("Verifying", total: storeBytes(path))
      defer { progress?.finish() }
      return try store.verify()
    }
    let report = Report(
      store: path, clean: verified.isClean, segmentsChecked: verified.segmentsChecked,
      recordsChecked: verified.recordsChecked, damage: verified.damage.map(Region.init))
    if arguments.flag("json") {
      try JSONOutput.write(report)
    } else {
      var text =
        "Checked \(counted(report.segmentsChecked, "segment")) of store '\(path)': "
        + "\(counted(report.recordsChecked, "record")) intact, "
      text += report.clean ? "no damage.\n" : "\(counted(report.damage.count, "damaged region")).\n"
      for region in report.damage {
        text += "  \(region.file) at offset \(region.offset), \(region.length) bytes: \(region.reason)\n"
      }
      StandardStream.output.write(text)
    }
    guard report.clean else {
      throw CLIError.failure("store '\(path)' is damaged: \(counted(report.damage.count, "damaged region"))")
    }
  }

  /// The bytes of the store's segment and hint files: about what a verification reads.
  static func storeBytes(_ path: String) -> UInt64 {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.reduce(0) { total, name in
      guard name.hasSuffix(".\(CaskFormat.segmentExtension)") || name.hasSuffix(".\(CaskFormat.hintExtension)"),
        let attributes = try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)"),
        let size = attributes[.size] as? NSNumber
      else { return total }
      return total + size.uint64Value
    }
  }
}
