import Foundation

/// The objects `cask-crash-writer --streamed-import` imports in run `run`, for the writer and
/// for the test that checks what survived it.
public enum StreamedImportObjects {
  public static let collection = "streamed"

  /// `count` objects; the last one repeats the first id with other values (and must win).
  public static func make(run: Int, count: Int) -> [CrashItem] {
    let owners = CollectionCrashWorkload.owners
    let tags = CollectionCrashWorkload.tagWords
    var items = (0..<count - 1).map { index in
      CrashItem(
        id: "r\(run)-\(index)", owner: owners[index % owners.count], rank: index % 30,
        tags: [tags[index % tags.count]], email: "r\(run)-\(index)@example.com", origin: "\(run).\(index)")
    }
    items.append(
      CrashItem(
        id: "r\(run)-0", owner: owners[1], rank: 29, tags: [], email: "r\(run)-last@example.com",
        origin: "\(run).last"))
    return items
  }

  /// The object run `run` saves before its import.
  public static func base(run: Int) -> CrashItem {
    CrashItem(
      id: "base-\(run)", owner: CollectionCrashWorkload.owners[0], rank: 0, tags: [],
      email: "base-\(run)@example.com", origin: "\(run).base")
  }
}
