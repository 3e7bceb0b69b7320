import CipherCask
import Foundation

extension CaskSync {
  /// One marked object to send.
  struct PushItem: Sendable {
    var id: String
    /// The mark's token when read: cleared only if it still holds it.
    var token: Data
    var recordID: String
    /// The local object; `nil` when deleted locally.
    var object: T?
    /// The server version the local change was made against; `nil` when the server never had it.
    var base: Int64?
  }

  /// What the server did with one item of a batch.
  private enum Outcome {
    case saved(Int64)
    case deleted
    case conflict(ServerVersion<T>)
    case again
  }

  /// Sends the marked objects in batches of the server's limit, conditional on the version
  /// each change was made against, until none is left or only failures remain (up to four
  /// rounds: a conflict that the client wins is sent again against the server's version).
  ///
  /// - Returns: the newest `last_modified` the server confirmed for a saved record, if any.
  @discardableResult
  func push(_ policy: SyncConflictPolicy, report: inout SyncReport<T>) async throws -> Int64? {
    var newest: Int64?
    for _ in 0..<4 {
      let items = try await gather()
      guard !items.isEmpty else { return newest }
      let limit = try await batchLimit()
      var again = false
      var start = 0
      while start < items.count {
        let chunk = Array(items[start..<min(items.count, start + limit)])
        start += chunk.count
        again = try await send(chunk, policy: policy, report: &report, newest: &newest) || again
      }
      if !again { return newest }
    }
    return newest
  }

  /// The marked objects (conflicts kept for the app left out), with what the server had; marks
  /// of objects created and deleted before the server saw them are cleared here.
  private func gather() async throws -> [PushItem] {
    let codec = self.codec
    return try await Self.offPool { [self] in
      var items: [PushItem] = []
      var nothing: [(String, Data)] = []
      for (id, token) in try ledger.pendingMarks(in: local.store) {
        guard let typed = T.ID(id) else { continue }
        let recordID = try codec.recordID(for: id)
        let object = try local.get(id: typed)
        let base = try ledger.meta(recordID, in: local.store)?.modified
        if object == nil && base == nil {
          nothing.append((id, token))
        } else {
          items.append(PushItem(id: id, token: token, recordID: recordID, object: object, base: base))
        }
      }
      if !nothing.isEmpty {
        try local.store.transaction { transaction in
          for (id, token) in nothing { try ledger.clearMark(id, token: token, in: &transaction) }
        }
      }
      return items
    }
  }

  /// Sends one batch and stores what the server confirmed.
  ///
  /// - Returns: whether some items must go again (failed, rolled back, or a conflict the client wins).
  private func send(
    _ items: [PushItem], policy: SyncConflictPolicy, report: inout SyncReport<T>, newest: inout Int64?
  ) async throws -> Bool {
    let answer = try await client.expect("POST", server.endpoint("/batch"), json: try batchBody(items))
    guard let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
      let responses = object["responses"] as? [[String: Any]], responses.count == items.count
    else { throw SyncError.decoding("a batch answer does not hold one response per request") }
    var outcomes = try zip(items, responses).map { try outcome(of: $0, response: $1) }
    // A failed item can roll back the ones before it although they were reported done (Kinto
    // on PostgreSQL, a 409 among them): then each one reported done is checked on the server.
    if outcomes.contains(where: { if case .again = $0 { return true } else { return false } }) {
      outcomes = try await confirm(items, outcomes)
    }
    let settled = outcomes
    let tally = try await Self.offPool { [self] in
      try local.store.transaction { transaction in
        var tally = ApplyTally<T>()
        var pushed = 0
        for (item, outcome) in zip(items, settled) {
          switch outcome {
          case .saved(let modified):
            try ledger.setMeta(.init(id: item.id, modified: modified), recordID: item.recordID, in: &transaction)
            try ledger.clearMark(item.id, token: item.token, in: &transaction)
            pushed += 1
          case .deleted:
            try ledger.setMeta(nil, recordID: item.recordID, in: &transaction)
            try ledger.clearMark(item.id, token: item.token, in: &transaction)
            pushed += 1
          case .conflict(let version):
            try apply(version, policy: policy, in: &transaction, tally: &tally)
          case .again:
            break
          }
        }
        try ledger.claim(in: &transaction)
        return (tally, pushed)
      }
    }
    for case .saved(let modified) in settled { newest = max(newest ?? modified, modified) }
    report.pushed += tally.1
    report.pulled += tally.0.pulled
    report.deleted += tally.0.deleted
    report.conflicts += tally.0.conflicts
    for conflict in tally.0.conflicts { emit(.conflict(id: conflict.id)) }
    emit(.pushedBatch(changes: tally.1, total: report.pushed))
    let failed = settled.contains { if case .again = $0 { return true } else { return false } }
    return failed || (policy == .clientWins && !tally.0.conflicts.isEmpty)
  }

  /// The body of `POST /v1/batch` for `items`.
  ///
  /// An update is a `PATCH` of the record's fields with `Response-Behavior: diff`, so that
  /// Kinto answers `{"data": {}}` and the new timestamp in the item's `ETag` instead of echoing
  /// the record (and its permissions) back; the fields replace the stored ones whole, as a
  /// `PUT` would (a plain `PATCH` sets top-level fields). A create is a `PUT` with
  /// `If-None-Match: *` (a `PATCH` needs an existing record) and a deletion a `DELETE`: Kinto
  /// echoes those whatever is asked. The method and the header shared by most items go once, in
  /// the batch's `defaults`, which Kinto merges into each request (an item's own method wins;
  /// `Response-Behavior` means nothing to a `PUT` or `DELETE`).
  func batchBody(_ items: [PushItem]) throws -> [String: Any] {
    let codec = self.codec
    var requests: [[String: Any]] = []
    for item in items {
      // Kinto refuses a batch whose request paths contain "/batch" (a recursive batch, it
      // reads): a record or collection named "batch…" goes with its first letter escaped.
      let path = (recordsPath + "/" + item.recordID).replacingOccurrences(of: "/batch", with: "/%62atch")
      var request: [String: Any] = ["path": path]
      let condition = item.base.map { ["If-Match": "\"\($0)\""] } ?? ["If-None-Match": "*"]
      if let object = item.object {
        if item.base == nil { request["method"] = "PUT" }
        request["body"] = ["data": try codec.fields(for: object, id: item.id)]
      } else {
        request["method"] = "DELETE"
      }
      request["headers"] = condition
      requests.append(request)
    }
    let defaults: [String: Any] = ["method": "PATCH", "headers": ["Response-Behavior": "diff"]]
    return ["defaults": defaults, "requests": requests]
  }

  private func outcome(of item: PushItem, response: [String: Any]) throws -> Outcome {
    let status = (response["status"] as? NSNumber)?.intValue ?? 0
    let body = response["body"] as? [String: Any]
    switch status {
    case 200..<300:
      guard item.object != nil else { return .deleted }
      // A create's answer holds the record; an update's (`Response-Behavior: diff`) only the
      // timestamp, in the item's ETag.
      let data = body?["data"] as? [String: Any]
      let headers = response["headers"] as? [String: Any]
      let etag = headers?.first { $0.key.caseInsensitiveCompare("ETag") == .orderedSame }?.value as? String
      guard let modified = (data?["last_modified"] as? NSNumber)?.int64Value ?? Self.timestamp(fromETag: etag)
      else { throw SyncError.decoding("a saved record's answer has no last_modified") }
      return .saved(modified)
    case 404 where item.object == nil:
      return .deleted  // already gone
    case 404 where ((body?["details"] as? [String: Any])?["resource_name"] as? String) == "record":
      // The update's record is gone from the server (a `PATCH` needs one, where a `PUT` with
      // `If-Match` met a 412 without `existing`): deleted there, in conflict with the change.
      return .conflict(ServerVersion(recordID: item.recordID, modified: -1, localID: item.id, object: nil))
    case 412:
      guard let existing = (body?["details"] as? [String: Any])?["existing"] as? [String: Any] else {
        // The server has no such record: deleted there (or never made).
        if item.object == nil { return .deleted }
        return .conflict(ServerVersion(recordID: item.recordID, modified: -1, localID: item.id, object: nil))
      }
      return .conflict(try version(of: existing))
    default:
      return .again
    }
  }

  /// Checks each item reported done against the server: a save must be there with the
  /// reported `last_modified`, a deletion must be gone. Items that are not are sent again.
  private func confirm(_ items: [PushItem], _ outcomes: [Outcome]) async throws -> [Outcome] {
    let reported = zip(items, outcomes).compactMap { item, outcome -> String? in
      switch outcome {
      case .saved, .deleted: return item.recordID
      default: return nil
      }
    }
    guard !reported.isEmpty else { return outcomes }
    let url = server.endpoint(
      recordsPath,
      query: [
        .init(name: "in_id", value: reported.joined(separator: ",")), .init(name: "_limit", value: "\(reported.count)"),
      ])
    let answer = try await client.expect("GET", url)
    guard let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
      let records = object["data"] as? [[String: Any]]
    else { throw SyncError.decoding("a listing of records is not a Kinto listing") }
    var present: [String: Int64] = [:]
    for record in records {
      if let id = record["id"] as? String, let modified = (record["last_modified"] as? NSNumber)?.int64Value {
        present[id] = modified
      }
    }
    var unconfirmed = 0
    let checked = zip(items, outcomes).map { item, outcome -> Outcome in
      let held: Bool
      switch outcome {
      case .saved(let modified): held = present[item.recordID] == modified
      case .deleted: held = present[item.recordID] == nil
      default: return outcome
      }
      if !held { unconfirmed += 1 }
      return held ? outcome : .again
    }
    if unconfirmed > 0 { emit(.unconfirmed(changes: unconfirmed)) }
    return checked
  }
}
