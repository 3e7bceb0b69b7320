import CipherCask
import Foundation

/// The `--json` documents of the commands that move data, with the field names of the
/// library's report types (`UpsertTally`, `CompactionReport`, `CaskBackupReport`).
enum Reports {
  /// `import` and `pull`.
  struct Upsert: Encodable {
    var store: String
    var collection: String
    var source: String
    var objects: Int
    var inserted: Int
    var replaced: Int
  }

  /// A place left out by `export --skip-damaged` or `salvage`.
  struct Skipped: Encodable {
    var file: String
    var offset: UInt64
    var reason: String
  }

  struct Export: Encodable {
    var store: String
    var collection: String?
    var destination: String
    var format: String
    var values: Int
    var skipped: [Skipped]
  }

  /// `CompactionReport`'s fields; `compacted` false (and the figures 0) when there was nothing to do.
  struct Compaction: Encodable {
    struct Region: Encodable {
      var file: String
      var offset: UInt64
      var length: UInt64
      var reason: String
    }

    var store: String
    var compacted: Bool
    var inputSegments = 0
    var outputSegments = 0
    var recordsCopied = 0
    var bytesBefore: UInt64 = 0
    var bytesAfter: UInt64 = 0
    var damagedRecords: [Region] = []

    init(store: String, report: CompactionReport?) {
      self.store = store
      compacted = report != nil
      guard let report else { return }
      inputSegments = report.inputSegments
      outputSegments = report.outputSegments
      recordsCopied = report.recordsCopied
      bytesBefore = report.bytesBefore
      bytesAfter = report.bytesAfter
      damagedRecords = report.damagedRecords.map {
        Region(file: $0.file, offset: $0.offset, length: $0.length, reason: $0.reason)
      }
    }
  }

  /// `CaskBackupReport`'s fields.
  struct Backup: Encodable {
    var store: String
    var destination: String
    var segments: Int
    var hints: Int
    var bytes: UInt64
  }

  /// `upgrade`.
  struct Upgrade: Encodable {
    var store: String
    var upgraded: Bool
    var previousVersion: Int
    var version: Int
    var keys: Int
    var removedLeftovers: Int
  }

  struct Password: Encodable {
    var store: String
    var changed: Bool
    /// The key epoch the store is under now.
    var keyEpoch: UInt32
    /// Live records (and their bytes) still sealed under an older key epoch.
    var olderRecords: Int
    var olderBytes: UInt64
  }

  struct Salvage: Encodable {
    var store: String
    var destination: String
    var values: Int
    var skipped: [Skipped]
  }

  static func skipped(_ values: [DamageList.Value]) -> [Skipped] {
    values.map { Skipped(file: $0.file, offset: $0.offset, reason: $0.reason) }
  }
}
