-- The 50-line plan of the `check/50_lines` benchmark (plan50.cord with shop.cord), written as
-- Elba-style Haskell: the shop as an effect monad with opaque types, refinements as smart
-- constructors. Type-checked with `ghc -fno-code Plan50.hs`, to compare whole processes with
-- `cordon check` (see `docs/performance.md`).
module Plan50 (plan) where

newtype Positive = Positive Int
newtype Amount = Amount Int
newtype NonEmpty = NonEmpty String
data Order = Order { orderId :: Int, customer :: String, items :: [Int], total :: Int }

class Monad m => Shop m where
  orders :: m [Order]
  stock :: Positive -> m Int
  refund :: Order -> Amount -> m Bool
  notify :: NonEmpty -> NonEmpty -> m ()

average :: Int -> Positive -> Int
average t (Positive n) = t `div` n

refundAmount :: Int -> Amount
refundAmount t
  | t < 1 = Amount 1
  | t > 10000 = Amount 10000
  | otherwise = Amount t

stockLabel :: Int -> String
stockLabel n
  | n == 0 = "out of stock"
  | n < 10 = "low"
  | otherwise = "in stock"

plan :: Shop m => m String
plan = do
  os <- orders
  let count = length os
      totals = map total os
      s = foldl (+) 0 totals
      avg = if count > 0 then average s (Positive count) else 0
      n = length totals
      first = if n > 0 then head totals else 0
      final = if n >= 2 then totals !! (n - 1) else first
      growth = if first /= 0 then (final - first) * 100 `div` first else 0
  inStock <- stock (Positive 42)
  let label = stockLabel inStock
      perOrder = if count > 0 then inStock `div` count else inStock
  refunded <- case os of
    (o : _) -> do
      let Amount a = refundAmount (total o `div` 10)
      if customer o /= ""
        then do
          notify (NonEmpty (customer o)) (NonEmpty ("A refund of " ++ show a ++ " cents is on its way."))
          refund o (Amount a)
        else pure False
    [] -> pure False
  let big = filter (\o -> total o > avg) os
      share = if not (null big) then length big * 100 `div` count else 0
      status = if refunded then "refunded" else "no refund"
  pure ("average " ++ show avg ++ ", growth " ++ show growth ++ "%, " ++ label
    ++ " (" ++ show perOrder ++ " per order), " ++ show share ++ "% big, " ++ status)
