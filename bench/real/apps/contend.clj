;; A Clojure program in three styles (bench/real/clojure.sh): pmap over a range,
;; 8 futures contending on one `locking` monitor with work inside it, and an agent
;; fed by `send`. Prints its own counts; the check compares them with the
;; expected values.
(ns contend)

(def shared (Object.))
(def counter (atom 0))

(defn work [n]
  (loop [i 0 acc 0]
    (if (< i n) (recur (inc i) (unchecked-add acc (bit-xor i acc))) acc)))

(defn locked-update []
  (locking shared
    (work 20000)
    (swap! counter inc)))

(defn run []
  (let [r (doall (pmap #(work (* 1000 %)) (range 200)))]
    (println "pmap" (count r)))
  (let [fs (doall (for [_ (range 8)] (future (dotimes [_ 300] (locked-update)))))]
    (doseq [f fs] @f))
  (let [a (agent 0)]
    (dotimes [_ 1000] (send a inc))
    (await a)
    (println "agent" @a))
  (println "counter" @counter)
  (shutdown-agents))

(run)
