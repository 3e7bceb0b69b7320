import CaskCLIKit
import CipherCask
import CipherCaskSync
import Foundation

extension PullCommand {
  /// How the pages of a resource follow one another, as `RemoteConfiguration.Pagination`
  /// describes for CipherCaskSync's `pullAll()`: `next` links in the envelope (relative to
  /// the page they are in), or a page parameter counted from 1 until a page holds no object.
  struct Pages {
    var envelope: String?
    var nextKey: String
    var pageParameter: String?
    /// `--max-pages`: every object is held until the last page, so this bounds what a server
    /// whose pages never end can make the command hold.
    var maximumPages: Int

    static let defaultMaximumPages = 10_000

    /// Every object of every page, as store keys and the bytes the server sent, in order.
    /// Nothing is written here: a failure on any page leaves the store as it was.
    ///
    /// - Throws: `CLIError.failure` naming the URL (without its query), the page and, for
    ///   malformed JSON, the line; never a header value or a value of an object.
    func fetchAll(from url: URL, with fetch: RemoteFetch, idField: String, prefix: String) throws
      -> [(key: String, value: Data)]
    {
      let counter = ProgressCounter()
      let progress = ProgressBar.start("Pulling", total: nil, unit: .items("objects")) { counter.current }
      defer { progress?.finish() }
      var records: [(key: String, value: Data)] = []
      var walk = Walk(start: url, maximumPages: maximumPages)
      var next: URL? = pageParameter.map { PageLink.numbered(url, parameter: $0, page: 1) } ?? url
      while let pageURL = next {
        try walk.enter(pageURL)
        let body = try fetch.get(pageURL, doing: "cannot pull from")
        do {
          let page = try PulledPage.parse(
            body, idKey: idField, envelope: envelope, nextKey: pageParameter == nil ? nextKey : nil)
          let ids = try Self.append(page.records, idField: idField, prefix: prefix, to: &records)
          counter.add(UInt64(ids.count))
          next = try nextURL(after: page, at: pageURL, ids: ids, walk: walk)
          try walk.leave(ids: ids, followedBy: next)
        } catch CollectionError.invalidImport(let reason, let line) {
          let at = line.map { ", line \($0)" } ?? ""
          throw CLIError.failure(
            "invalid answer from '\(walk.place)' (page \(walk.number)\(at)): \(fetch.scrubbed(reason)); "
              + "nothing was written")
        }
      }
      return records
    }

    /// Appends the store key and bytes of each of `pageRecords` to `records`.
    ///
    /// - Returns: the ids, in the page's order.
    private static func append(
      _ pageRecords: [JSONRecord], idField: String, prefix: String, to records: inout [(key: String, value: Data)]
    ) throws -> [String] {
      var ids: [String] = []
      for record in pageRecords {
        let id = try ImportID.of(record, field: idField)
        let key = prefix + id
        guard key.utf8.count <= CaskFormat.maximumKeyLength else {
          throw CollectionError.invalidImport(reason: "the id is too long for a key", line: record.line)
        }
        ids.append(id)
        records.append((key, record.bytes))
      }
      return ids
    }

    /// The page after `page` (fetched from `pageURL`, holding `ids`), or `nil` at the end: the
    /// next page number while pages hold objects, or the page's next link on the same server.
    private func nextURL(after page: PulledPage, at pageURL: URL, ids: [String], walk: Walk) throws -> URL? {
      if let pageParameter {
        guard ids.isEmpty || ids != walk.previousIDs else {
          throw CollectionError.invalidImport(
            reason: "it holds the same objects as the page before: is '\(pageParameter)' ignored?", line: nil)
        }
        return ids.isEmpty ? nil : PageLink.numbered(walk.start, parameter: pageParameter, page: walk.number + 1)
      }
      do {
        return try page.next.map { link in
          guard let next = try PageLink.resolve(link, on: pageURL, walkStartedAt: walk.start) else {
            throw CollectionError.invalidImport(reason: "its next link is not a URL", line: nil)
          }
          return next
        }
      } catch let error as PageLink.LeavesServer {
        throw CollectionError.invalidImport(reason: error.reason, line: nil)
      }
    }
  }

  /// Where a walk over the pages stands, and the checks that stop one that would never end.
  struct Walk {
    /// The first page's URL: next links must stay on its server.
    let start: URL
    let maximumPages: Int
    /// The resource's URL without its query, for messages.
    let place: String
    /// The number of the page being read, from 1.
    private(set) var number = 0
    /// The ids of the page before, in order.
    private(set) var previousIDs: [String]?
    private var visited = Set<URL>()
    private var received = Set<[UInt8]>()

    init(start: URL, maximumPages: Int) {
      self.start = start
      self.maximumPages = maximumPages
      place = RemoteFetch.display(start)
    }

    /// Counts the page at `url`, refusing one over the limit or one fetched before.
    mutating func enter(_ url: URL) throws {
      number += 1
      guard number <= maximumPages else {
        throw CLIError.failure(
          "'\(place)' has more than \(maximumPages) pages (raise --max-pages if it should); nothing was written")
      }
      guard visited.insert(url).inserted else {
        throw CLIError.failure(
          "invalid answer from '\(place)' (page \(number - 1)): its next link points back to a page already "
            + "fetched; nothing was written")
      }
    }

    /// Records the page's ids, refusing a page that brings nothing new when another follows.
    mutating func leave(ids: [String], followedBy next: URL?) throws {
      // Pages that start over (page numbers or cursors that wrap around) come under new
      // URLs, and the pages between two copies differ: only a page with nothing new tells.
      var anyNew = false
      for id in ids { anyNew = received.insert(Array(id.utf8)).inserted || anyNew }
      guard next == nil || ids.isEmpty || anyNew else {
        throw CollectionError.invalidImport(
          reason: "it holds only objects of earlier pages, and another page follows it: do the pages start over?",
          line: nil)
      }
      previousIDs = ids
    }
  }
}
