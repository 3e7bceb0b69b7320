import CaskCLIKit
import CipherCask
import Foundation

/// `cask verify STORE [--expect-token TOKEN] [--json]`: authenticates every record; exit 1 when
/// anything is damaged or the store is older than the token.
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
    /// Stored indexes whose entries and objects disagree (CaskStore.checkIndexEntries).
    var indexProblems: [IndexEntryCheck]
    /// Indexes whose build was cut short or failed (CaskStore.incompleteIndexes): queries
    /// scan until the app builds them; not damage, so the exit status is left alone.
    var incompleteIndexes: [IncompleteIndex]
    /// With --expect-token: whether the store is the token's state or a later one.
    var fresh: Bool?
    /// With --expect-token, when the store is not: why.
    var freshnessProblem: String?
    /// The current key epoch, and the live records (and bytes) still under an older one: after
    /// a password change, what an old copy of the header still opens until `cask compact`.
    var keyEpoch: UInt32
    var olderKeyRecords: Int
    var olderKeyBytes: UInt64
  }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let expectedToken = arguments.option("expect-token")
    let verified = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      let progress = ProcessIO.progressBar("Verifying", total: storeBytes(path))
      defer { progress?.finish() }
      let freshness = try expectedToken.map { try freshnessFailure(store, token: $0) }
      return (
        try store.verify(), try store.checkIndexEntries().filter { !$0.isClean }, freshness, store.keyEpochs,
        try store.incompleteIndexes()
      )
    }
    let epochs = verified.3
    let freshnessProblem = verified.2 ?? nil
    let report = Report(
      store: path, clean: verified.0.isClean && verified.1.isEmpty && freshnessProblem == nil,
      segmentsChecked: verified.0.segmentsChecked, recordsChecked: verified.0.recordsChecked,
      damage: verified.0.damage.map(Region.init), indexProblems: verified.1, incompleteIndexes: verified.4,
      fresh: expectedToken == nil ? nil : freshnessProblem == nil, freshnessProblem: freshnessProblem,
      keyEpoch: epochs.currentEpoch, olderKeyRecords: epochs.olderRecords, olderKeyBytes: epochs.olderBytes)
    if arguments.flag("json") {
      try JSONOutput.write(report)
    } else {
      var text =
        "Checked \(counted(report.segmentsChecked, "segment")) of store '\(path)': "
        + "\(counted(report.recordsChecked, "record")) intact, "
      text += report.damage.isEmpty ? "no damage.\n" : "\(counted(report.damage.count, "damaged region")).\n"
      for region in report.damage {
        text += "  \(region.file) at offset \(region.offset), \(region.length) bytes: \(region.reason)\n"
      }
      for problem in report.indexProblems {
        text +=
          "  index '\(problem.index)' of collection '\(problem.collection)': "
          + "\(problem.danglingEntries) of \(problem.entries) entries without an object, "
          + "\(counted(problem.objectsWithoutEntry, "object")) without an entry\n"
      }
      for incomplete in report.incompleteIndexes {
        text +=
          "  index '\(incomplete.index)' of collection '\(incomplete.collection)' is not complete: its build "
          + "was cut short or failed (an object that does not decode, say); queries scan until the app builds it\n"
      }
      if report.olderKeyRecords > 0 {
        text +=
          "  Key epoch "
          + StatsCommand.keyEpochText(
            epoch: report.keyEpoch, olderRecords: report.olderKeyRecords, olderBytes: report.olderKeyBytes) + "\n"
      }
      if let freshnessProblem { text += "  not fresh: \(freshnessProblem)\n" }
      if expectedToken != nil, freshnessProblem == nil {
        text += "  The store is the integrity token's state or a later one.\n"
      }
      StandardStream.output.write(text)
    }
    guard report.damage.isEmpty else {
      throw CLIError.failure("store '\(path)' is damaged: \(counted(report.damage.count, "damaged region"))")
    }
    guard report.indexProblems.isEmpty else {
      throw CLIError.failure(
        "store '\(path)': \(report.indexProblems.count) of its indexes disagree with the objects")
    }
    if let freshnessProblem { throw CLIError.failure("store '\(path)' \(freshnessProblem)") }
  }

  /// Why `store` is not the state of `token` or a later one, or nil when it is.
  static func freshnessFailure(_ store: CaskStore, token: String) throws -> String? {
    do {
      try store.checkFreshness(against: token)
      return nil
    } catch CaskError.integrityViolation(_, let reason) {
      return reason.hasPrefix("the store is older")
        ? "is older than the integrity token: an older copy of the store"
        : "does not match the integrity token: it is not this store's"
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
