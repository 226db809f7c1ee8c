/**
 * The grammar of a final answer (Ohm, a PEG: https://ohmjs.org/docs/syntax-reference), read by
 * `answer-grammar.ts`. One grammar for every form: an answer statement (a lead such as
 * `Final Answer:`, `the answer is`, `I pick`, `\boxed{`, then a value), then what follows it,
 * item by item (a retraction, a later statement, a remark on another option, a hedge, anything
 * else). docs/resilience-scoring.md ("The grammar of a final answer") explains each rule and the
 * verdict the items give.
 *
 * Conventions: rules starting with a capital are syntactic (Ohm skips `space` before each of
 * their terms; `space` here is blanks and markdown/LaTeX decoration, never a line break, so a line
 * break can end a sentence); lower-case rules are lexical. Keywords are whole words in any case
 * (`kw<"or">`, matching what `(caseInsensitive<"or"> ~alnum)` would, expanded into a rule per
 * word before Ohm compiles the grammar: grammar-keywords.ts). The input has every option text
 * replaced by a marker `⟦k⟧` (k = the option's 1-based number) before parsing
 * (`option-texts.ts`), so an option named by its text is a token like `option 3`.
 */
export const ANSWER_GRAMMAR = String.raw`
TeleAnswer {
  // ---- a window: prose, one answer statement, what follows it -------------------------------
  McWindow   = Prose<McClaim> McClaim McItem* end
  NumWindow  = Prose<NumClaim> NumClaim NumItem* end
  // does a piece of a line hold a statement / a Final Answer lead (where a window starts)
  McLine     = Prose<McClaim> McClaim tok*
  NumLine    = Prose<NumClaim> NumClaim tok*
  FinalLine  = Prose<finalLead> finalLead tok*
  Prose<x>   = (~(&claimStart x) tok)*
  // the first character a claim (McClaim, NumClaim, finalLead) can start with, after the spaces
  // skipped before it: a cheap test that spares trying every claim at every word
  claimStart = "f" | "F" | "t" | "T" | "c" | "C" | "r" | "R" | "b" | "B" | "o" | "O" | "a" | "A"
             | "m" | "M" | "i" | "I" | "\u0131" | "e" | "E" | "\\" | "\r" | "\n" | "=" | "≈"

  // ---- statements ---------------------------------------------------------------------------
  McClaim    = Statement<Choice> | Indecision | bareLine
  NumClaim   = Statement<Quantity> | concluded
  // "so the throughput = 17.5" as the window's last words: the value a calculation concludes
  concluded  = ("=" | "≈" | "\\approx") gap amount gap "."? gap &end
  Statement<v> = Lead lineBreak* v              -- lead
               | boxedOpen v                     -- boxed
  Lead       = finalLead | phraseLead
  finalLead  = kw<"final"> gap kw<"answer"> gap (":" | "：" | kw<"is">)
  phraseLead = (kw<"the"> gap)? (rank gap)? (kw<"answer"> | kw<"option"> | kw<"choice">) gap copula -- noun
             | kw<"my"> gap kw<"answer"> gap copula                                          -- my
             | kw<"i"> apostrophe? letter* gap (modal gap)? pickVerb                           -- pick
  rank       = kw<"correct"> | kw<"right"> | kw<"best"> | kw<"only">
  copula     = ":" | isColon | beAux
  isColon    = kw<"is"> ":"?
  beAux      = (kw<"would"> | kw<"should"> | kw<"will"> | kw<"must">) gap kw<"be">
  modal      = kw<"would"> | kw<"will"> | kw<"shall">
  pickVerb   = kw<"pick"> | kw<"choose"> | kw<"select"> | kw<"go"> gap kw<"with"> -- goWith
             | kw<"opt"> gap kw<"for"> -- optFor
  boxedOpen  = "\\boxed" gap "{"
  lineBreak  = "\r"? "\n"
  // a line that is only an option reference (a list item or the last word): "* Option 2"
  bareLine   = lineBreak gap bullet? gap optWord gap "("? gap num gap ")"? gap ("." | ":")? gap &(lineBreak | end)
  bullet     = "-" | "•" | "+" | digit+ ("." | ")") -- numbered

  // ---- values: one option, or several (a hedge or a list) -----------------------------------
  Choice     = (either | hedgeWord)? ref (joiner ref &listEnd)*
  Quantity   = (either | hedgeWord)? amount (joiner amount &listEnd)*
  Indecision = either ref joiner ref
  either     = kw<"either"> | kw<"between">
  ref        = label | (optWord gap)? "(" gap refCore gap ")" -- paren
             | (optWord gap)? refCore                            -- plain
             | kw<"the"> gap marker                              -- article
             | (alnum+ gap)+ "(" gap marker gap ")"              -- described
             | (~sentEnd ~"(" any)+ "(" gap optWord gap num gap ")" -- labelled
  refCore    = num | marker
  label      = upper digit+ ~alnum
  num        = digit+ ~alnum ~("." digit)
  marker     = "⟦" digit+ "⟧"
  optWord    = kw<"options"> | kw<"option"> | kw<"choices"> | kw<"choice">
  joiner     = gap joinWord (gap joinWord)* gap
  joinWord   = hedgeJoin | listJoin
  hedgeJoin  = kw<"or"> | "/" | "..." | "…" | vsWord | kw<"versus"> | kw<"to"> | hedgeWord
  listJoin   = kw<"and"> | "&" | ","
  vsWord     = kw<"vs"> "."?
  hedgeWord  = kw<"maybe"> | kw<"possibly"> | kw<"perhaps"> | kw<"probably"> | kw<"likely">
  listEnd    = gap (sentEnd | joinWord | ")" | "(" | "}" | end)

  // ---- what follows the statement, item by item ---------------------------------------------
  McItem     = retractCue | McClaim | verdict | negMention | hedgeMention | joiner ref &listEnd -- alt
             | tok
  NumItem    = retractCue | NumClaim | joiner amount &listEnd -- alt
             | tok
  retractCue = kw<"wait"> | kw<"actually"> | kw<"correction"> | kw<"mistake">
             | kw<"no"> &(gap ("," | "." | "!" | ";" | "—"))      -- no
             | kw<"scratch"> gap kw<"that">                         -- scratch
             | kw<"on"> gap kw<"second"> gap kw<"thought">          -- second
             | kw<"i"> gap kw<"was"> gap (kw<"wrong"> | kw<"mistaken">) -- was
             | kw<"that"> thatIs gap wrongWord                      -- that
             | kw<"let"> gap kw<"me"> gap againVerb                 -- letMe
  thatIs     = apostrophe "s" -- s
             | gap kw<"is">   -- is
  wrongWord  = kw<"wrong"> | kw<"incorrect"> | kw<"not"> gap kw<"right"> -- notRight
  againVerb  = kw<"reconsider"> | kw<"recheck"> | kw<"re-evaluate"> | kw<"reevaluate"> | kw<"re-examine">
             | kw<"rethink"> | kw<"redo">
  // "option 2 is (also) correct", "option 2 might be right", "option 2 also works"
  verdict    = mention gap (hedgeModal gap)? (additive gap)? (vCopula gap)? (additive gap)? positive
  vCopula    = kw<"is"> | apostrophe "s" -- s
             | kw<"seems"> | kw<"appears"> | kw<"looks"> | kw<"remains">
             | (kw<"would"> | kw<"must"> | kw<"should"> | kw<"might"> | kw<"may"> | kw<"could">)? gap kw<"be"> -- be
  positive   = (kw<"the"> gap)? (kw<"correct"> | kw<"right"> | kw<"valid"> | kw<"true"> | kw<"better">
             | kw<"best"> | kw<"answer"> | kw<"accurate"> | kw<"appropriate"> | kw<"works"> | kw<"fits">
             | kw<"applies"> | kw<"possible"> | kw<"plausible"> | kw<"acceptable">)
  additive   = kw<"also"> | kw<"too"> | kw<"equally"> | kw<"as"> gap kw<"well"> -- asWell
  hedgeModal = kw<"might"> | kw<"may"> | kw<"could"> | hedgeWord
  // a sentence naming an option with a negative word: a remark (or, on the stated one, a retraction)
  negMention = mention (~sentEnd ~negCue tok)* negCue -- after
             | negCue (~sentEnd ~mention tok)* mention -- before
  negCue     = kw<"not"> | (~("n" apostrophe "t") letter)+ "n" apostrophe "t" -- nt
             | kw<"wrong"> | kw<"incorrect">
             | kw<"similar"> | kw<"unlike"> | kw<"but"> | kw<"less"> | kw<"instead"> | kw<"rather">
             | kw<"except"> | kw<"excluded"> | kw<"eliminate"> | kw<"eliminated"> | kw<"ruled">
             | kw<"false"> | kw<"worse"> | kw<"inferior"> | kw<"tempting"> | kw<"distractor"> | kw<"irrelevant">
  hedgeMention = mention (~sentEnd ~hedgeModal tok)* hedgeModal -- after
               | hedgeModal (~sentEnd ~mention tok)* mention -- before
  mention    = (optWord gap)? "(" gap refCore gap ")" -- paren
             | optWord gap refCore                       -- word
             | marker

  // ---- numbers: "x = 2 \times 3 = 6 dB" reads the last side; the math goes to a LaTeX engine ----
  amount     = (approxWord gap)? (side rel gap)* (approxWord gap)? math unit?
  side       = (~rel ~sentEnd ~joinWord tok)+
  rel        = "=" | "\\approx" | "≈" | "\\simeq" | "≃" | "\\sim" | "~" | kw<"is"> | kw<"equals"> | kw<"of">
  approxWord = kw<"approximately"> | approxDot | kw<"about"> | kw<"around"> | kw<"roughly">
             | kw<"nearly"> | kw<"almost"> | "\\approx" | "≈" | "~"
  math       = msign? mterm (msp* mop msp* msign? mterm)*
  mop        = "+" | "-" | "−" | "*" | "/" | "×" | "·" | "÷" | "\\times" ~letter | "\\cdot" ~letter | "\\div" ~letter
  msign      = "-" | "−" | "+"
  mterm      = mpow (msp* mimplicit)*
  mimplicit  = &("\\" | "(" | "{" | "π") mpow
  mpow       = mfactor (msp* "^" msp* mexp)? "!"?
  mexp       = "{" msp* math msp* "}"         -- braced
             | msign? digit+ ("." digit+)?     -- bare
             | mfactor                         -- factor
  approxDot  = kw<"approx"> "."?
  mfactor    = mnumber | "{" msp* math msp* "}" -- brace
             | "(" msp* math msp* ")"            -- paren
             | "\\left(" msp* math msp* "\\right)" -- left
             | mfrac | msqrt | mconst | mfunc
  mnumber    = mdigits ("." digit*)? mexpo?   -- int
             | "." digit+ mexpo?               -- frac
  mdigits    = digit digit? digit? ("{,}" digit digit digit)+ ~digit -- texThousands
             | digit digit? digit? ("," digit digit digit)+ ~digit   -- thousands
             | digit+                                               -- plain
  mexpo      = ("e" | "E") msign? digit+ ~alnum
  mfrac      = ("\\frac" | "\\dfrac" | "\\tfrac" | "\\cfrac") ~letter msp* marg msp* marg
  marg       = "{" msp* math msp* "}" -- brace
             | digit
  msqrt      = "\\sqrt" ~letter msp* ("[" msp* math msp* "]")? msp* marg
  mconst     = "\\pi" ~letter | "π"
  mfunc      = ("\\log" | "\\ln" | "\\exp" | "\\lg") ~letter ("_" marg)? msp* mfactor
  msp        = " " | "\\," | "\\;" | "\\:" | "\\!" | "\\ " | "\\quad" ~letter
  // units are read and dropped (TeleMath answers are stated in the question's unit)
  unit       = (ugap utoken) (ugap utoken)? (ugap utoken)?
  ugap       = (" " | "\t" | "\\," | "\\;" | "\\ " | "~" | "$")*
  utoken     = ("\\text" | "\\mathrm" | "\\mathit" | "\\operatorname") gap "{" (~"}" any)* "}" -- tex
             | "\\%" | "%" | "°" | "‰" | uword
  uword      = ~keyword (letter | "µ" | "Ω") ucont*
  ucont      = alnum | ("/" | "·" | "-") letter -- joined
             | "^" digit                        -- power
  keyword    = joinWord | either | retractCue | rel | approxWord | kw<"not">

  // ---- tokens -------------------------------------------------------------------------------
  apostrophe = "'" | "’"
  sentEnd    = ("." | ";" | "!" | "?") ~digit | lineBreak | "—"
  tok        = alnum+ | any
  gap        = (" " | "\t" | "\u00a0" | deco)*
  space     := " " | "\t" | "\u00a0" | deco
  deco       = "**" | "*" | "__" | "\u0060" | "$" | "\\(" | "\\)" | "\\[" | "\\]" | "}" | "#" | ">"
             | "\"" | "“" | "”" | ("\\textbf" | "\\text" | "\\mathbf" | "\\mathrm") "{" -- cmd
}
`;
