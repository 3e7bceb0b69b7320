import CipherCask
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension CaskSync {
  /// Pulls what changed on the server since the stored cursor, page by page, each page
  /// stored in one commit with the cursor that covers it. Lists the whole collection instead
  /// (a full resync) on the first sync, and when the cursor can no longer be served: the
  /// collection is gone or recreated, its timestamp went backwards, or it holds another number
  /// of records than the ones known here once the changes are applied (tombstones purged).
  func pull(_ policy: SyncConflictPolicy, state: inout SyncLedger.State, report: inout SyncReport<T>) async throws {
    if state.cursor != nil, try await pullChanges(policy, state: &state, report: &report) { return }
    emit(.fullResync)
    report.fullResync = true
    try await pullEverything(policy, state: &state, report: &report)
  }

  /// The incremental pull. Returns `false` when a full resync is needed.
  ///
  /// One `HEAD` tells the collection's timestamp and record count: the same timestamp as the
  /// cursor and as many records as are known here, with every record up to the cursor
  /// settled, is a sync with nothing to pull (one request). Another count at the same
  /// timestamp means tombstones were purged (a purge can even bring the timestamp back to the
  /// cursor); a timestamp behind the cursor means the collection was recreated or the server's
  /// clock went back: both need a full resync. Otherwise the changes are listed from the
  /// settled timestamp (`SettlingWindow`): a late commit dated before the cursor moves
  /// neither the collection's timestamp nor, for an update, its count.
  private func pullChanges(
    _ policy: SyncConflictPolicy, state: inout SyncLedger.State, report: inout SyncReport<T>
  ) async throws -> Bool {
    // Changes that land while the pull runs move the timestamp on; a few rounds catch up
    // with a busy collection before the counts are compared.
    for _ in 0..<3 {
      guard let cursor = state.cursor, let start = state.listingStart else { return false }
      let head = try await client.send("HEAD", server.endpoint(recordsPath))
      if [401, 403, 404].contains(head.status) {
        // The collection is gone: make it again, then list it (empty) whole.
        state.prepared = false
        return false
      }
      guard (200..<300).contains(head.status) else { throw head.failure }
      guard let timestamp = Self.timestamp(fromETag: head.header("ETag")),
        let total = head.header("Total-Records").flatMap(Int.init)
      else { throw SyncError.decoding("the server sent no ETag or Total-Records for the records") }
      guard timestamp >= cursor else { return false }
      if timestamp == cursor, start == cursor { return try await knownCount() == total }
      let url = server.endpoint(recordsPath, query: listQuery(since: start))
      let first = try await client.expect("GET", url)
      _ = try await walk(from: first, full: false, policy: policy, state: &state, report: &report)
      let moved = max(state.cursor ?? timestamp, timestamp)
      state.cursor = moved
      // The HEAD was answered before the listing began: its time is the safe one to settle by.
      state.settled = SettlingWindow.settled(
        after: head, cursor: moved, previous: start, margin: server.settlingMilliseconds)
      try await save(state)
      // Unchanged between the HEAD and the listing: the count is the listing's.
      if Self.timestamp(fromETag: first.header("ETag")) == timestamp { return try await knownCount() == total }
    }
    return true
  }

  /// The full resync: lists every record, stores them, then removes the local objects the
  /// server no longer has, except those with unsent changes, which are sent as new.
  private func pullEverything(
    _ policy: SyncConflictPolicy, state: inout SyncLedger.State, report: inout SyncReport<T>
  ) async throws {
    if !state.prepared {
      state = try await prepare()
    }
    let url = server.endpoint(recordsPath, query: listQuery(since: nil))
    let first = try await client.expect("GET", url)
    let started = Self.timestamp(fromETag: first.header("ETag"))
    let seen = try await walk(from: first, full: true, policy: policy, state: &state, report: &report)
    var finished = state
    finished.cursor = started
    finished.settled = started.map {
      SettlingWindow.settled(after: first, cursor: $0, previous: nil, margin: server.settlingMilliseconds)
    }
    let done = finished
    let removed = try await Self.offPool { [self] in
      try local.store.transaction { transaction in
        var removed = 0
        for key in try transaction.keys(inGroup: ledger.metaGroup) where !seen.contains(SyncLedger.rest(of: key)) {
          guard let meta = try SyncLedger.decode(SyncLedger.Meta.self, transaction.get(key)) else { continue }
          try transaction.delete(key)
          guard try !ledger.isMarked(meta.id, in: transaction), let id = T.ID(meta.id) else { continue }
          let objectKey = try local.storageKey(for: id)
          if try transaction.contains(objectKey) {
            try transaction.delete(objectKey)
            removed += 1
          }
        }
        try ledger.write(done, in: &transaction)
        return removed
      }
    }
    state = done
    report.deleted += removed
  }

  /// `_since` (when incremental), oldest first, `pageSize` a page.
  private func listQuery(since cursor: Int64?) -> [URLQueryItem] {
    var query = [
      URLQueryItem(name: "_sort", value: "last_modified"), URLQueryItem(name: "_limit", value: "\(server.pageSize)"),
    ]
    if let cursor { query.insert(URLQueryItem(name: "_since", value: "\(cursor)"), at: 0) }
    return query
  }

  /// Stores the pages from `first` on, following `Next-Page`, one commit each; an incremental
  /// walk moves the cursor to each page's newest record in that commit.
  ///
  /// - Returns: the record ids listed.
  private func walk(
    from first: HTTPResponse, full: Bool, policy: SyncConflictPolicy, state: inout SyncLedger.State,
    report: inout SyncReport<T>
  ) async throws -> Set<String> {
    var response = first
    var seen = Set<String>()
    var total = 0
    while true {
      guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
        let records = object["data"] as? [[String: Any]]
      else { throw SyncError.decoding("a page of records is not a Kinto listing") }
      let versions = try records.map(version(of:))
      for version in versions { seen.insert(version.recordID) }
      var page = state
      if !full, let newest = versions.map(\.modified).max() {
        page.cursor = max(page.cursor ?? newest, newest)
        // Dated in commit order: nothing listed can be followed by an older late commit, so an
        // interrupted pull resumes after this page. Otherwise it resumes from the settled
        // timestamp, which only a whole listing moves.
        if server.settlingMilliseconds == 0 { page.settled = page.cursor }
      }
      let pageState = page
      if cache.withLock({ $0.plantedCursorFirst }) { try await save(pageState) }
      let tally = try await Self.offPool { [self] in
        try local.store.transaction { transaction in
          var tally = ApplyTally<T>()
          for version in versions { try apply(version, policy: policy, in: &transaction, tally: &tally) }
          try ledger.write(pageState, in: &transaction)
          return tally
        }
      }
      state = pageState
      report.pulled += tally.pulled
      report.deleted += tally.deleted
      report.conflicts += tally.conflicts
      for conflict in tally.conflicts { emit(.conflict(id: conflict.id)) }
      total += versions.count
      emit(.pulledPage(records: versions.count, total: total))
      guard let link = response.header("Next-Page"), let next = URL(string: link) else { return seen }
      guard PageLink.sameServer(next, server.url) else {
        throw SyncError.decoding("the next page is on another server")
      }
      response = try await client.expect("GET", next)
    }
  }

  private func save(_ state: SyncLedger.State) async throws {
    try await Self.offPool { [self] in try local.store.transaction { try ledger.write(state, in: &$0) } }
  }

  /// How many records this device knows the server holds.
  private func knownCount() async throws -> Int {
    let store = local.store
    let group = ledger.metaGroup
    return try await Self.offPool { store.count(inGroup: group) }
  }
}
