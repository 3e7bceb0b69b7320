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
}
