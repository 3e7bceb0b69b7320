// `cask-crash-writer --sigbus-chain DIR [--own-handler]`: a store's gets recover from the SIGBUS
// of a segment cut short under its mapping, and any other SIGBUS goes where it went before
// the store installed its handler. With `--own-handler` the process first installs a SIGBUS
// handler that exits with status 42; without it, SIGBUS keeps its default action (the
// process ends by the signal). Started by MappedReadTests with SWIFT_BACKTRACE=enable=no, so
// that the Swift runtime installs no handler of its own. The exit status says what happened.

import CaskEngine
import CaskTestSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

enum SigbusChain {
  /// The exit statuses the test reads.
  enum Status: Int32 {
    case setUpFailed = 2
    /// The get of a record past the cut returned a value.
    case cutNotNoticed = 3
    /// The get past the cut threw something other than a corrupt-record error.
    case cutOtherError = 4
    /// `raise(SIGBUS)` returned.
    case raiseReturned = 5
    /// The handler installed before the store's ran.
    case earlierHandlerRan = 42
  }

  static func run(in directory: String, ownHandler: Bool) -> Never {
    if ownHandler {
      var action = sigaction()
      action.__sigaction_handler.sa_sigaction = { _, _, _ in _exit(SigbusChain.Status.earlierHandlerRan.rawValue) }
      action.sa_flags = SA_SIGINFO
      sigemptyset(&action.sa_mask)
      guard sigaction(SIGBUS, &action, nil) == 0 else { exit(Status.setUpFailed.rawValue) }
    }
    let path = directory + "/store.cask"
    var options = testStoreOptions
    options.recordCacheBytes = 0
    guard let store = try? CaskStore(path: path, password: testPassword, options: options) else {
      exit(Status.setUpFailed.rawValue)
    }
    let value = Data(repeating: 0x61, count: 1000)
    for index in 0..<100 { guard (try? store.put(value, forKey: "key-\(index)")) != nil else { exit(2) } }
    // The second read of the segment maps it (the first is a `pread`).
    guard (try? store.get("key-0")) == value, (try? store.get("key-1")) == value,
      let names = try? FileManager.default.contentsOfDirectory(atPath: path),
      let segment = names.first(where: { $0.hasSuffix(".seg") }),
      truncate(path + "/" + segment, 4096) == 0
    else { exit(Status.setUpFailed.rawValue) }
    do {
      _ = try store.get("key-99")
      exit(Status.cutNotNoticed.rawValue)
    } catch CaskError.corrupt {
    } catch {
      exit(Status.cutOtherError.rawValue)
    }
    raise(SIGBUS)
    exit(Status.raiseReturned.rawValue)
  }
}
