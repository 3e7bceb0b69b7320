import CaskCLIKit
import CipherCask
import CipherCaskSync
import Foundation

/// `cask pull STORE URL --collection NAME --id-key KEY [--header-file FILE]`: upserts
/// the objects of a REST resource, every page of it, in one atomic batch.
enum PullCommand: Subcommand {
  static var spec: CommandSpec { .pull }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let url = try RemoteFetch.url(arguments.argument("url"), argument: "url", spec: spec)
    let collection = arguments.requiredOption("collection")
    let prefix = try KeyText.collectionPrefix(collection, spec)
    let idField = arguments.requiredOption("id-key")
    if arguments.option("page-parameter") != nil && arguments.option("next-key") != nil {
      throw CLIError.usage("--next-key cannot be used with --page-parameter: numbered pages have no next link", spec)
    }
    let pages = Pages(
      envelope: arguments.option("envelope"), nextKey: arguments.option("next-key") ?? "next",
      pageParameter: arguments.option("page-parameter"),
      maximumPages: try arguments.positiveInteger("max-pages") ?? Pages.defaultMaximumPages)
    let fetch = try RemoteFetch(arguments)
    let totals = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let records = try pages.fetchAll(from: url, with: fetch, idField: idField, prefix: prefix)
      return (records.count, try ImportCommand.write(records, to: store))
    }
    if arguments.flag("json") {
      return try JSONOutput.write(
        Reports.Upsert(
          store: path, collection: collection, source: RemoteFetch.display(url), objects: totals.0,
          inserted: totals.1.inserted, replaced: totals.1.replaced))
    }
    StandardStream.output.write(
      "Pulled \(counted(totals.0, "object")) from '\(RemoteFetch.display(url))' into collection '\(collection)' of store "
        + "'\(path)': \(totals.1.inserted) inserted, \(totals.1.replaced) replaced.\n")
  }

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
      var next: URL? = pageParameter.map { Self.url(url, parameter: $0, page: 1) } ?? url
      var number = 0
      var visited = Set<URL>()
      var previousIDs: [String]?
      var received = Set<[UInt8]>()
      let place = RemoteFetch.display(url)
      while let pageURL = next {
        number += 1
        guard number <= maximumPages else {
          throw CLIError.failure(
            "'\(place)' has more than \(maximumPages) pages (raise --max-pages if it should); nothing was written")
        }
        guard visited.insert(pageURL).inserted else {
          throw CLIError.failure(
            "invalid answer from '\(place)' (page \(number - 1)): its next link points back to a page already "
              + "fetched; nothing was written")
        }
        let body = try fetch.get(pageURL, doing: "cannot pull from")
        var ids: [String] = []
        do {
          let page = try PulledPage.parse(
            body, idKey: idField, envelope: envelope, nextKey: pageParameter == nil ? nextKey : nil)
          for record in page.records {
            let id = try ImportID.of(record, field: idField)
            let key = prefix + id
            guard key.utf8.count <= CaskFormat.maximumKeyLength else {
              throw CollectionError.invalidImport(reason: "the id is too long for a key", line: record.line)
            }
            ids.append(id)
            records.append((key, record.bytes))
          }
          counter.add(UInt64(page.records.count))
          if let pageParameter {
            guard ids.isEmpty || ids != previousIDs else {
              throw CollectionError.invalidImport(
                reason: "it holds the same objects as the page before: is '\(pageParameter)' ignored?", line: nil)
            }
            next = ids.isEmpty ? nil : Self.url(url, parameter: pageParameter, page: number + 1)
          } else {
            do {
              next = try page.next.map { link in
                guard let next = try PageLink.resolve(link, on: pageURL, walkStartedAt: url) else {
                  throw CollectionError.invalidImport(reason: "its next link is not a URL", line: nil)
                }
                return next
              }
            } catch let error as PageLink.LeavesServer {
              throw CollectionError.invalidImport(reason: error.reason, line: nil)
            }
          }
          // Pages that start over (page numbers or cursors that wrap around) come under new
          // URLs, and the pages between two copies differ: only a page with nothing new tells.
          var anyNew = false
          for id in ids { anyNew = received.insert(Array(id.utf8)).inserted || anyNew }
          guard next == nil || ids.isEmpty || anyNew else {
            throw CollectionError.invalidImport(
              reason: "it holds only objects of earlier pages, and another page follows it: do the pages start over?",
              line: nil)
          }
        } catch CollectionError.invalidImport(let reason, let line) {
          let at = line.map { ", line \($0)" } ?? ""
          throw CLIError.failure(
            "invalid answer from '\(place)' (page \(number)\(at)): \(fetch.scrubbed(reason)); nothing was written")
        }
        previousIDs = ids
      }
      return records
    }

    /// `url` with `parameter=page` in its query (replacing any such item).
    static func url(_ url: URL, parameter: String, page: Int) -> URL {
      var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
      var items = components?.queryItems ?? []
      items.removeAll { $0.name == parameter }
      items.append(URLQueryItem(name: parameter, value: String(page)))
      components?.queryItems = items
      return components?.url ?? url
    }
  }
}
