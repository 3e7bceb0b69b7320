import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The clock, memory and disk figures a peer reads about itself.
public enum ProcessFigures {
  /// Nanoseconds on the monotonic clock.
  @inline(__always)
  public static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// The seconds since `start`, a reading of `now()`.
  public static func seconds(since start: UInt64) -> Double {
    Double(now() &- start) / 1e9
  }

  /// The process's peak resident set so far, in bytes (`getrusage`'s `ru_maxrss`).
  public static func peakRSS() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
  }

  /// The process's resident set now, in bytes (the second field of /proc/self/statm).
  public static func currentRSS() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// The sizes of the files directly in `directory`, added up: what a copy of a store's folder
  /// holds (0 for a folder that cannot be listed).
  public static func fileBytes(_ directory: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.reduce(0) { total, name in
      let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name))?[.size] as? NSNumber
      return total + (size?.intValue ?? 0)
    }
  }

  /// Bytes allocated on disk (`st_blocks` × 512) by every file under `directory`. On ext4,
  /// `st_blocks` already counts blocks reserved for data not yet written back (delayed
  /// allocation), so no sync is needed first.
  public static func diskBytes(_ directory: String) -> Int {
    var total = 0
    let manager = FileManager.default
    guard let enumerator = manager.enumerator(atPath: directory) else { return 0 }
    while let relative = enumerator.nextObject() as? String {
      var info = stat()
      if lstat(directory + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
        total += Int(info.st_blocks) * 512
      }
    }
    return total
  }
}

/// Monotonic wall-clock timing, on `ProcessFigures.now()`'s clock: the one clock of every
/// figure, in the peers and in `cask-bench`.
public enum Stopwatch {
  /// The seconds `body` takes.
  public static func seconds(_ body: () throws -> Void) rethrows -> Double {
    try timed(body).seconds
  }

  /// What `body` returns, and the seconds it takes.
  public static func timed<Result>(_ body: () throws -> Result) rethrows -> (result: Result, seconds: Double) {
    let start = ProcessFigures.now()
    let result = try body()
    return (result, ProcessFigures.seconds(since: start))
  }
}
