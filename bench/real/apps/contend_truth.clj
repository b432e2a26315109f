;; Ground truth for the Clojure lock figures (bench/real/clojure_truth.sh): the 8 futures of
;; contend.clj, each acquisition of the `locking` monitor timed by the program itself
;; (System/nanoTime before `locking` and inside it). Prints the sum of those waits and how
;; many took over 50 us, to compare with what weft recorded for the monitor.
(ns truth)
(def shared (Object.))
(def counter (atom 0))
(def acq-ns (atom 0))
(def slow (atom 0))
(defn work [n]
  (loop [i 0 acc 0]
    (if (< i n) (recur (inc i) (unchecked-add acc (bit-xor i acc))) acc)))
(defn locked-update []
  (let [t0 (System/nanoTime)]
    (locking shared
      (let [d (- (System/nanoTime) t0)]
        (swap! acq-ns + d)
        (when (> d 50000) (swap! slow inc)))
      (work 20000)
      (swap! counter inc))))
(let [t0 (System/nanoTime)
      fs (doall (for [_ (range 8)] (future (dotimes [_ 300] (locked-update)))))]
  (doseq [f fs] @f)
  (println "phase-ms" (quot (- (System/nanoTime) t0) 1000000)))
(println "counter" @counter "acquire-ms" (quot @acq-ns 1000000) "acquisitions>50us" @slow)
(shutdown-agents)
