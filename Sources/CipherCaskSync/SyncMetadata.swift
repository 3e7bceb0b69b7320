import CipherCask
import Foundation

/// What the client knows of the server's copy of each object: that the server has it, and
/// its ETag when the server sent one. Kept encrypted in the same store, in the key group
/// `__sync:<collection>`, and written in the same batches as the objects.
struct SyncMetadata<T: Codable & Identifiable & Sendable>: Sendable where T.ID: LosslessStringConvertible & Sendable {
  let collection: CaskCollection<T>

  struct Entry: Codable, Sendable, Equatable {
    var etag: String?
  }

  var group: String { "__sync:" + collection.name }

  func key(for id: T.ID) -> String {
    group + CaskFormat.keyGroupSeparatorText + id.description
  }

  /// What is known about `id`, or `nil` if the server has never confirmed it.
  func entry(for id: T.ID) throws -> Entry? {
    guard let data = try collection.store.get(key(for: id)) else { return nil }
    return try? JSONDecoder().decode(Entry.self, from: data)
  }

  /// Records that the server has `id`, in the version whose ETag is `etag` (nil when the
  /// answer carried none: the version is then unknown, and the next change is sent without
  /// `If-Match` rather than with an ETag that no longer matches).
  func record(etag: String?, for id: T.ID, in transaction: inout CaskTransaction) throws {
    try transaction.put(JSONEncoder().encode(Entry(etag: etag)), forKey: key(for: id))
  }

  /// Forgets `id` (after a delete).
  func forget(_ id: T.ID, in transaction: inout CaskTransaction) throws {
    if try transaction.contains(key(for: id)) { try transaction.delete(key(for: id)) }
  }
}
