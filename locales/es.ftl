# Los textos del participante en español: el formulario, el panel «lo que sale de su
# dispositivo», el recibo, los envíos en espera sin conexión y la elección de encuesta
# (issue 13 §2). Tiene exactamente los mismos identificadores que en.ftl (src/i18n/tests.rs).

## Language
language-label = Idioma
language-name = Español

## Opening a survey
survey-fallback-title = Encuesta
survey-loading = Cargando la encuesta…
survey-broken = No se puede abrir esta encuesta: { $reason }
survey-needs-connection = Esta encuesta necesita conexión para abrirse; nada de lo que respondió se guarda en este dispositivo.
survey-weak-plan = No se puede abrir esta encuesta: protegería sus respuestas menos de lo que exige esta aplicación ({ $reason }). Se rechazó y no se envió nada.
floor-no-qa = no tiene columna de control, así que no se detectarían datos alterados por el camino
floor-cohort = publicaría un grupo de { $found } respuestas, menos de las { $floor } necesarias para ocultar cada respuesta entre otras
floor-noise-columns = completa las respuestas con { $found } números aleatorios, menos de los { $needed } que necesita un grupo de { $cohort }
floor-noise-level = su nivel de ruido { $found } está por debajo del { $needed } que oculta las respuestas
floor-unchecked = no se puede comprobar su enmascaramiento: { $reason }
floor-share-services = reparte cada respuesta entre { $found } servicios de enmascaramiento por la derecha, menos de los { $needed } que impiden que el recolector de datos lea las respuestas junto con uno de ellos
floor-service-limit = su { $what } es { $found }, más de los { $limit } que pueden manejar los servicios, así que sus respuestas nunca podrían usarse
floor-share-noise = su ruido de reparto { $found } está por debajo del { $needed } que oculta las respuestas a cada servicio de enmascaramiento por la derecha
floor-qa-constant = su valor de control { $found } está por debajo del { $floor } necesario para detectar datos alterados por el camino
floor-qa-blind = sus registros son tan largos ({ $scale }) que su control no detectaría cambios menores que { $revealed }
floor-dp-budget = su ruido de privacidad { $sigma } solo garantiza δ = { $found } con ε = { $epsilon } para un grupo de { $cohort }, más que el δ = { $stated } que promete
badge-practice = Demostración: esta encuesta usa una clave de enseñanza publicada, así que las respuestas no son privadas. Practique libremente: nada de lo que escriba se envía a ningún sitio.
badge-live-demonstration = Encuesta de demostración: cualquiera puede responderla y su clave se entrega a todo el que la abre, así que no escriba datos personales reales.
progress = Progreso: { $percent } %
app-build = Esta página es la versión { $short } de la aplicación. Cualquiera puede comprobar que es la versión publicada: orthomask audit --app { $origin }/ --expect { $digest }

## Consent
consent-heading = Consentimiento
consent-agree = He leído esto y acepto participar.
consent-start = Empezar la encuesta

## One question per screen
question-counter = Pregunta { $number } de { $total }
question-optional = opcional
answer-yes = Sí
answer-no = No
button-back = Atrás
button-skip = Saltar esta pregunta
button-next = Siguiente
button-review = Revisar

## Why an answer does not fit (next to the field and announced)
answer-missing = esta pregunta necesita una respuesta
answer-not-yes-no = elija sí o no
answer-integer = escriba un número entero de { $min } a { $max }
answer-number = escriba un número de { $min } a { $max }
answer-likert = elija un punto de 1 a { $points }
answer-category = elija una de las { $count } opciones
answer-wrong-kind = la respuesta no corresponde al tipo de pregunta
answer-no-such-question = no hay pregunta { $number }
answer-count = se esperaban { $expected } respuestas y llegaron { $found }
answer-not-shown = esta pregunta no se hace tras su respuesta anterior; déjela vacía
answer-unknown-option = { $given } no es una de las opciones ({ $options })

## Announcements for screen readers
announce-loaded = Encuesta cargada. Lea el texto de consentimiento.
announce-need-consent = Marque la casilla de consentimiento para continuar.
announce-invalid = Pregunta { $number }: { $reason }
announce-all-answered = Todas las preguntas respondidas. Revise lo que saldrá de su dispositivo.
announce-sending = Enviando…
announce-sending-attempt = Enviando, intento { $attempt }…
announce-sent = Enviado. Su recibo está abajo.
announce-waiting = Sin conexión: sus respuestas enmascaradas esperan en este dispositivo y se enviarán cuando vuelva la conexión.
announce-discarded = El envío en espera se descartó; no se envió nada de él.
announce-answering-again = Alguien de su grupo envió datos no válidos, así que el grupo quedó fuera de los resultados. Sus respuestas se están enviando de nuevo en un grupo nuevo…
announce-answering-again-regrouped = En su grupo respondieron demasiado pocas personas para enmascarar las respuestas, así que no se usó nada de ese grupo. Sus respuestas se están enviando de nuevo en un grupo nuevo…
announce-sent-again = Alguien de su grupo envió datos no válidos, así que el grupo quedó fuera de los resultados; sus respuestas se enviaron de nuevo en un grupo nuevo. Su nuevo recibo está abajo.
announce-sent-again-regrouped = En su grupo respondieron demasiado pocas personas para enmascarar las respuestas, así que no se usó nada de ese grupo; sus respuestas se enviaron de nuevo en un grupo nuevo. Su nuevo recibo está abajo.

## Review: what leaves your device
review-mask-failed = No se pudieron enmascarar sus respuestas: { $reason }
review-masking = Enmascarando sus respuestas en este dispositivo…
leaves-heading = Lo que sale de su dispositivo
leaves-basic = Sus respuestas se completaron con { $p2 } números aleatorios y se giraron con una rotación aleatoria secreta, así que estos { $count } números no revelan ninguna respuesta concreta. El servicio de enmascaramiento solo ve estos números girados, y el equipo de la encuesta solo puede deshacer la rotación después de que ese servicio haya mezclado su fila con las de todos los demás: nadie puede leer ni vincular sus respuestas.
leaves-shares = Sus { $answers } respuestas se completaron con { $p2 } números aleatorios y se dividieron en { $parts } partes aleatorias que suman lo mismo; cada parte va a un servicio distinto y oculta sus respuestas bajo un ruido aleatorio { $ratio } veces mayor que cualquier respuesta que admita esta encuesta.
leaves-one-service = Por sí sola, una parte muestra sus respuestas con una relación señal-ruido inferior a { $snr }: tan privada como un mecanismo gaussiano con ε = { $epsilon } y δ = { $delta }.
leaves-shares-nobody = El equipo de la encuesta solo recibe las filas de todos mezcladas por cada servicio, así que nadie —ni un servicio ni el equipo de la encuesta— puede leer ni vincular sus respuestas.
leaves-practice-key = En esta demostración la clave es pública, así que cualquiera podría deshacer el enmascaramiento: nunca escriba respuestas reales aquí.
leaves-destination = { $count } números a { $url }
leaves-destination-practice = { $count } números irían a { $url }
leaves-token = Encuesta { $survey }, cohorte { $cohort }, código de envío { $token } (hace que un envío repetido cuente una sola vez).
practice-note = Esto fue una práctica: una encuesta de demostración no envía nada. En una encuesta real, el enlace que le envía el equipo abre la encuesta de su propio recolector, y solo se enviarían estos números enmascarados.
button-change = Cambiar mis respuestas
button-send = Enviar
button-sending = Enviando (intento { $attempt })…
button-try-again = Intentar de nuevo

## Receipt
receipt-heading = Gracias: se recibieron sus respuestas enmascaradas
receipt-received-by = Recibido por
receipt-cohort = Cohorte
receipt-time = Hora
receipt-hash = Huella del envío
receipt-list = Lista publicada
receipt-list-link = Recibos de la cohorte { $cohort } en este servicio (cuando se cierre)
receipt-explain = La huella identifica exactamente lo que se envió; se comprobó con su envío. Guárdela para verificar más tarde que su registro está en la cohorte publicada.
receipt-save = Guardar el recibo

## Answering again (the group was left out: spoilt, or regrouped with too few answers)
again-taking-place = Alguien de su grupo envió datos no válidos, así que ese grupo quedó fuera de los resultados. Sus respuestas siguen en esta página: se enmascaran de nuevo y se envían en un grupo nuevo…
again-taking-place-regrouped = En su grupo respondieron demasiado pocas personas para enmascarar las respuestas, así que no se usó nada de ese grupo. Sus respuestas siguen en esta página: se enmascaran de nuevo y se envían en un grupo nuevo…
again-failed = Su grupo quedó fuera de los resultados porque alguien envió datos no válidos, y todavía no se pudieron enviar de nuevo sus respuestas: { $reason }
again-failed-regrouped = En su grupo respondieron demasiado pocas personas para enmascarar las respuestas, así que no se usó nada de ese grupo, y todavía no se pudieron enviar sus respuestas en un grupo nuevo: { $reason }
again-try = Enviar de nuevo mis respuestas
again-note = Alguien de su grupo anterior envió datos no válidos, así que ese grupo quedó fuera de los resultados; sus respuestas se enviaron de nuevo en un grupo nuevo. Este es su nuevo recibo: el anterior ya no cuenta.
again-note-regrouped = En su grupo anterior respondieron demasiado pocas personas para enmascarar las respuestas, así que no se usó nada de ese grupo; sus respuestas se enviaron de nuevo en un grupo nuevo. Este es su nuevo recibo: el anterior ya no cuenta.

## Waiting to send (offline)
waiting-heading = En espera de envío
waiting-explain = No hay conexión. Solo sus números enmascarados (nunca sus respuestas) esperan en este dispositivo, y se envían en cuanto vuelve la conexión; entonces se muestra el recibo.
waiting-item = Encuesta { $survey }, cohorte { $cohort }: { $count } números enmascarados
waiting-send-now = Enviar ahora
waiting-discard = Descartar
waiting-sending = Enviando el envío en espera…
waiting-refused = El envío en espera no se envió: { $reason }
waiting-store-failed = Este navegador no pudo guardar el envío enmascarado para más tarde ({ $reason }); permanezca en esta página e inténtelo de nuevo cuando tenga conexión.
waiting-left-out = Alguien de este grupo envió datos no válidos, así que el grupo quedó fuera de los resultados y estas respuestas enmascaradas no se usarán. En este dispositivo solo se guardaron números enmascarados, así que no pueden enviarse de nuevo: responda otra vez mediante el enlace que recibió.
waiting-left-out-regrouped = En este grupo respondieron demasiado pocas personas para enmascarar las respuestas, así que no se usó nada del grupo, ni siquiera estas respuestas enmascaradas. En este dispositivo solo se guardaron números enmascarados, así que no pueden enviarse de nuevo: responda otra vez mediante el enlace que recibió.

## Choosing a survey
chooser-title = Responder una encuesta
chooser-intro = Abra el enlace que le envió el equipo de la encuesta, o pruebe una demostración.
chooser-looking = Buscando demostraciones en vivo…
chooser-static-host = Esta copia de la aplicación funciona sin los servicios de Orthomask (un alojamiento estático), así que las demostraciones de abajo son prácticas: enviar necesita los servicios. Ejecute `bash scripts/run.sh` para probar el ciclo completo en su equipo.
chooser-no-live = Este despliegue no tiene ahora ninguna demostración en vivo; su equipo envía los enlaces a las encuestas reales.
chooser-live-heading = Demostraciones en vivo
chooser-live-intro = Funcionan con los servicios de este despliegue: sus respuestas se enmascaran en este dispositivo y los números enmascarados se envían de verdad. Son demostraciones, así que no escriba datos personales reales.
chooser-groups = — grupos de { $size }
chooser-groups-shares = — grupos de { $size }, repartidos entre varios servicios (modo de partes)
chooser-practice-heading = Práctica (no se envía nada)

## Practice demonstrations (bundled, nothing is sent)
practice-leaps-demo = Caminar después de un ictus (las preguntas LEAPS del artículo)
practice-wellbeing-optional = Salud y bienestar (todos los tipos de pregunta, preguntas opcionales)
practice-shares-demo = Modo de partes (resistente a la colusión: tres servicios)
practice-habits-branching = Hábitos cotidianos (preguntas que siguen sus respuestas; inglés y español)

## Simulated participants (on the receipt of a live demonstration)
simulate-heading = Completar la cohorte con participantes simulados
simulate-explain = Esto es una demostración, así que nadie tiene que esperar a otras personas: participantes simulados pueden ocupar las plazas libres de la cohorte { $cohort }. Cada uno responde al azar y pasa por el mismo enmascaramiento y envío que el formulario de un participante.
simulate-button = Dejar que se unan participantes simulados
simulate-counting = Contando las plazas libres de la cohorte { $cohort }…
simulate-joining = { $joined } de { $of } participantes simulados se han unido…
simulate-already-full = La cohorte { $cohort } ya estaba completa: se cierra sola y los servicios la entregan.
simulate-done = Se unieron { $joined } participantes simulados: la cohorte { $cohort } está completa, así que se cierra sola y los servicios la entregan al recolector.
simulate-next-before = El equipo de la encuesta cierra la encuesta y publica los resultados en su página,
simulate-next-link = la página del equipo de la encuesta
simulate-next-after = (inicie sesión con el token de administración que mostró scripts/run.sh); desde allí los resultados se abren en la vista de análisis y en la de auditoría.

## The app's frame (navigation, skip link, footer)
nav-label = Principal
nav-home = Inicio
nav-participate = Responder una encuesta
nav-analyze = Analizar unos resultados
nav-classroom = Aula
nav-audit = Auditoría
nav-admin = Equipo de la encuesta
skip-to-content = Saltar al contenido
footer = Orthomask: recogida de datos de encuestas que protege la privacidad mediante el triple enmascaramiento matricial.
