"""Stop words for the BM25 tokenizer variants that drop them.

Kept short on purpose: function words that carry no topic. Negations and
question words stay out of the English list (they change what a note says),
and the Chinese list holds particles, pronouns and connectives as jieba
segments them.
"""

from __future__ import annotations

_ENGLISH_WORDS = (
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for from "
    "further had has have having he her here hers herself him himself his i if in into is "
    "it its itself just me more most my myself of off on once only or other our ours "
    "ourselves out over own same she should so some such than that the their theirs them themselves then "
    "there these they this those through to too under until up very was we were what when where "
    "which while who whom why will with would you your yours yourself yourselves s t d ll m "
    "o re ve y "
)
ENGLISH = frozenset(_ENGLISH_WORDS.split())

_CHINESE_WORDS = (
    "的 了 着 过 是 在 和 与 及 或 而 且 但 就 都 也 还 又 把 被 "
    "对 从 向 给 让 以 于 为 之 其 所 这 那 这个 那个 这些 那些 这样 那样 一个 "
    "一些 有些 我 你 他 她 它 我们 你们 他们 她们 它们 自己 啊 吧 呢 吗 嘛 呀 哦 "
    "么 个 等 等等 则 即 并 并且 而且 因为 所以 如果 虽然 但是 然后 就是 还是 只是 可以 已经 "
    "这种 那种 什么 怎么 哪 哪个 哪些 如何 为什么 "
)
CHINESE = frozenset(_CHINESE_WORDS.split())

STOP_WORDS = ENGLISH | CHINESE
