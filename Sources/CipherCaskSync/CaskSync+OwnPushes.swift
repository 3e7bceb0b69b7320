import CipherCask
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension CaskSync {
  /// The most ids one listing page of `passOwnPushes` asks for: ids and timestamps only, so a
  /// page of this many stays small.
  static var ownPushesPageSize: Int { 1_000 }

  /// Moves the cursor past this device's own pushes when nothing else changed meanwhile, so
  /// that the next sync does not download the records it just sent.
  ///
  /// A push gives its records timestamps after the cursor; without this step the next
  /// incremental pull lists them all again (every field of every record) only to find that each
  /// is already stored. Here one listing of ids and timestamps since the cursor, up to `newest`
  /// (the newest timestamp the push got), decides: when applying each record it lists would
  /// change nothing — a record whose stored server version has that very timestamp, or a
  /// deletion of a record this device does not hold — the cursor moves to `newest` in one
  /// commit. Any other record (another client's change, a deletion of a record held here)
  /// leaves the cursor where it is, and the next pull lists everything as before. Exact either
  /// way: the cursor only passes records whose application would be a no-op.
  func passOwnPushes(through newest: Int64, state: inout SyncLedger.State) async throws {
    guard let cursor = state.cursor, newest > cursor else { return }
    let query = [
      URLQueryItem(name: "_since", value: "\(cursor)"), URLQueryItem(name: "_sort", value: "last_modified"),
      URLQueryItem(name: "_fields", value: "id,last_modified,deleted"),
      URLQueryItem(name: "_limit", value: "\(Self.ownPushesPageSize)"),
    ]
    var response = try await client.expect("GET", server.endpoint(recordsPath, query: query))
    var listed: [(recordID: String, modified: Int64, deleted: Bool)] = []
    var finished = false
    while !finished {
      guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
        let records = object["data"] as? [[String: Any]]
      else { throw SyncError.decoding("a page of records is not a Kinto listing") }
      for record in records {
        guard let recordID = record["id"] as? String,
          let modified = (record["last_modified"] as? NSNumber)?.int64Value
        else { throw SyncError.decoding("a record has no id or last_modified") }
        // Sorted by timestamp: what comes after `newest` is not passed, and not looked at.
        guard modified <= newest else {
          finished = true
          break
        }
        listed.append((recordID, modified, record["deleted"] as? Bool == true))
      }
      guard !finished, let link = response.header("Next-Page"), let next = URL(string: link) else { break }
      guard PageLink.sameServer(next, server.url) else {
        throw SyncError.decoding("the next page is on another server")
      }
      response = try await client.expect("GET", next)
    }
    let passed = listed
    var moved = state
    moved.cursor = newest
    // The settled timestamp stays where the last listing left it unless records are dated in
    // commit order: a record dated before `newest` may still commit (Docs/SYNC.md, 15.3, step 8).
    moved.settled = server.settlingMilliseconds == 0 ? newest : state.listingStart
    let target = moved
    let done = try await Self.offPool { [self] in
      try local.store.transaction { transaction -> Bool in
        for record in passed {
          let meta = try ledger.meta(record.recordID, in: transaction)
          let noOp = record.deleted ? meta == nil : meta?.modified == record.modified
          guard noOp else { return false }
        }
        try ledger.write(target, in: &transaction)
        return true
      }
    }
    if done { state = target }
  }
}
