import CaskCLIKit
import CipherCask
import Foundation

/// `cask upgrade STORE`: rewrites a version 2 store as version 3, in place.
enum UpgradeCommand: Subcommand {
  static var spec: CommandSpec { .upgrade }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    try StoreAccess.requireExisting(path)
    let password = try PasswordSource.password(arguments, subject: "store '\(path)'")
    let report: CaskUpgradeReport
    do {
      report = try Interruption.stoppingOnSignal { shouldContinue in
        let progress = ProgressBar.start("Upgrading", total: nil, unit: .time) { 0 }
        defer { progress?.finish() }
        return try CaskStore.upgrade(at: path, password: password, shouldContinue: shouldContinue)
      }
    } catch let error as CLIError {
      throw error
    } catch {
      throw CLIError.failure(ErrorMessage.describe(error, store: path))
    }
    if arguments.flag("json") {
      return try JSONOutput.write(
        Reports.Upgrade(
          store: path, upgraded: report.upgraded, previousVersion: Int(report.previousVersion),
          version: Int(report.version), keys: report.keys, removedLeftovers: report.removedLeftovers.count))
    }
    let removed = report.removedLeftovers.count
    let leftovers =
      removed == 0
      ? ""
      : " Removed \(removed) hidden \(removed == 1 ? "directory" : "directories") left by an upgrade that was cut off."
    if report.upgraded {
      StandardStream.error.write(
        "Upgraded store \(MessageText.quoted(path)) from format version \(report.previousVersion) to "
          + "\(report.version): \(counted(report.keys, "key")) copied.\(leftovers)\n")
    } else {
      StandardStream.error.write(
        "Store \(MessageText.quoted(path)) has format version \(report.version) already: nothing to do.\(leftovers)\n")
    }
  }
}
