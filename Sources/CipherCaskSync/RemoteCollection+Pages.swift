import CipherCask
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension RemoteCollection {
  /// Every object of every page of the resource, in order, and their ids by UTF-8 bytes (as
  /// the store keys them, `CaskCollection.sameKey`). Nothing is written here.
  ///
  /// - Throws: `SyncError.decoding` for a walk that would never end (a page fetched twice,
  ///   more than `maximumPages`, the same page again, pages that start over) or a next link
  ///   that is not a URL or leaves the server; what `send` and decoding throw.
  func fetchPages(
    adjust: RequestHook?, progress: (@Sendable (SyncProgress) -> Void)?
  ) async throws -> (objects: [T], listed: Set<[UInt8]>) {
    var objects: [T] = []
    var moved = SyncProgress()
    let first = firstPageURL()
    var next: URL? = first
    var page = configuration.pagination.firstPage
    var visited = Set<URL>()
    var previousIDs: [String]?
    var received = Set<[UInt8]>()
    while let url = next {
      try Self.checkCancelled()
      guard visited.insert(url).inserted else { throw SyncError.decoding("pagination loops back to a visited page") }
      guard visited.count <= configuration.maximumPages else {
        throw SyncError.decoding(
          "more than \(configuration.maximumPages) pages (RemoteConfiguration.maximumPages); nothing was written")
      }
      let response = try await send(method: "GET", url: url, body: nil, adjust: adjust)
      let decoded = try decodeObjects(from: response.body)
      let ids = decoded.objects.map(\.id.description)
      // A server that ignores the page parameter sends the same page again and again.
      guard ids.isEmpty || ids != previousIDs else {
        throw SyncError.decoding("two pages in a row hold the same objects: is the page parameter ignored?")
      }
      previousIDs = ids
      var anyNew = false
      for id in ids { anyNew = received.insert(Array(id.utf8)).inserted || anyNew }
      objects += decoded.objects
      moved.objects += decoded.objects.count
      moved.bytes += Int64(response.body.count)
      progress?(moved)
      next = try nextPageURL(after: decoded.next, at: url, empty: decoded.objects.isEmpty, first: first, page: &page)
      // Pages that start over (page numbers or cursors that wrap around) come under new URLs,
      // and the pages between two copies differ: only a page with nothing new tells.
      guard next == nil || ids.isEmpty || anyNew else {
        throw SyncError.decoding(
          "a page holds only objects already received, and another page follows it: do the pages start over?")
      }
    }
    return (objects, received)
  }

  /// The page after the one at `url`, whose next link is `link` and which held no object when
  /// `empty`; `page` is the current page number, advanced for numbered pages.
  private func nextPageURL(after link: String?, at url: URL, empty: Bool, first: URL, page: inout Int) throws -> URL? {
    switch configuration.pagination {
    case .none:
      return nil
    case .nextURL:
      do {
        return try link.map { link in
          guard let next = try PageLink.resolve(link, on: url, walkStartedAt: first) else {
            throw SyncError.decoding("its next link is not a URL")
          }
          return next
        }
      } catch let error as PageLink.LeavesServer {
        throw SyncError.decoding(error.reason)
      }
    case .page(let parameter, _):
      guard !empty else { return nil }
      let (following, overflow) = page.addingReportingOverflow(1)
      guard !overflow else { throw SyncError.decoding("page \(page) is not empty and no page number follows it") }
      page = following
      return pageURL(parameter: parameter, page: page)
    }
  }
}
